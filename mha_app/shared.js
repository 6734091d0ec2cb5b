// Helpers every component's script shares (mha_app/components.py puts this file in front of each).

// Save a blob as a file named `name`, as a download link does.
function download(blob, name) {
  const a = document.createElement('a');
  a.href = URL.createObjectURL(blob);
  a.download = name;
  a.click();
  setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
}
