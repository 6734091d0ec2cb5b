"""Small Streamlit pieces the pages share: charts, layout, questions, notices, pickers and controls."""
