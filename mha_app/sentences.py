"""Sentences for the trained models, in which their heads show known patterns (label -> sentence)."""

EXAMPLE_SENTENCES = {
    "Coreference (what does 'it' refer to?)": "The cat sat on the mat because it was tired.",
    "Long-range dependency (keys ... are)":
        "The keys that the man who lives next door lost yesterday are on the table.",
    "Repeated words": "the dog chased the cat and the cat chased the dog",
    "Word sense (bank vs bank)": "She sat on the river bank and watched the bank across the street close.",
    "Short sentence": "Attention is all you need.",
}
