"""The lesson that presentation mode shows: one idea per screen, in order (key, title). pages/lesson.py draws them."""

SCREENS = (
    ("tokens", "A sentence becomes n vectors"),
    ("heads", "h heads, each d_k = d_model / h wide"),
    ("scores", "Scores: every query against every key"),
    ("softmax", "Softmax turns each row into weights"),
    ("by_hand", "One weight, by hand"),
    ("mix", "Each head mixes the values"),
    ("grid", "Every head looks its own way"),
    ("concat", "Concatenate the heads"),
    ("w_o", "W_O mixes the heads"),
    ("cost", "Do more heads cost more?"),
    ("cache", "Real models: the K/V cache"),
    # Inside the heads (issue 21). Added at the end, so that every earlier screen keeps its number in shared links.
    ("plane", "Queries and keys as points"),
    ("adds", "A large weight can add little"),
    ("rollout", "Following attention through the layers"),
)
