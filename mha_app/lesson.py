"""The lesson that presentation mode shows: one idea per screen, in order (key, title). pages/lesson.py draws them."""

SCREENS = (
    ("tokens", "A sentence becomes n vectors"),
    ("heads", "h heads, each d_k = d_model / h wide"),
    ("scores", "Scores: every query against every key"),
    ("softmax", "Softmax turns each row into weights"),
    ("by_hand", "One weight, by hand"),
    ("mix", "Each head mixes the values"),
    ("grid", "Every head looks its own way"),
    ("concat", "Concatenate: back to d_model columns"),
    ("w_o", "W_O mixes the heads"),
    ("cost", "h heads cost what one wide head costs"),
    ("cache", "Real models: the K/V cache"),
)
