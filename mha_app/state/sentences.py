"""Example sentences for each trained model, in which its heads show known patterns (label -> sentence)."""

EXAMPLE_SENTENCES = {  # all-MiniLM-L6-v2, an encoder
    "Coreference (what does 'it' refer to?)": "The cat sat on the mat because it was tired.",
    "Long-range dependency (keys ... are)":
        "The keys that the man who lives next door lost yesterday are on the table.",
    "Repeated words": "the dog chased the cat and the cat chased the dog",
    "Word sense (bank vs bank)": "She sat on the river bank and watched the bank across the street close.",
    "Short sentence": "Attention is all you need.",
}

DECODER_SENTENCES = {  # SmolLM2-135M-Instruct, a decoder: what it reads, and what it predicts next
    "Coreference (what does 'it' refer to?)": "The cat sat on the mat because it was tired.",
    "Repeated phrase (induction heads)":
        "The blue whale swam past the red lighthouse. The blue whale swam past the red",
    "A fact to complete": "The capital of France is",
    "Long-range dependency (keys ... are)":
        "The keys that the man who lives next door lost yesterday are on the table.",
    "Chat template (special tokens)":
        "<|im_start|>user\nWhat is the capital of France?<|im_end|>\n<|im_start|>assistant\n",
}

SENTENCES = {"all-MiniLM-L6-v2": EXAMPLE_SENTENCES, "SmolLM2-135M-Instruct": DECODER_SENTENCES}


def examples(model: str) -> dict[str, str]:
    """The example sentences of a trained model (label -> sentence); {} for a model without any."""
    return SENTENCES.get(model, {})
