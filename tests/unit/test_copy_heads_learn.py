"""What the Heads learn page says: the tiny model, its training, the real models' heads and the claims tested."""

from __future__ import annotations

from mha_app.copy import heads_learn as texts


def test_the_progress_text_adds_the_held_out_loss_when_known():
    assert texts.progress_text("Training", 3, 10) == "Training: 3 of 10"
    assert texts.progress_text("Training", 3, 10, 0.12345) == "Training: 3 of 10 (held-out loss 0.123)"


def test_the_task_line_quotes_the_example_and_counts_its_tokens():
    line = texts.task_line("Induction", "A rule.", ["A", "*B*", "A"], 3, 1)
    assert line == "**Induction.** A rule. Example: `A *B* A` (3 tokens, a vocabulary of 1)."
    assert "(1 token," in texts.task_line("T", "R.", ["x"], 1, 5)


def test_the_sizes_caption_for_one_head_and_several_learned_or_sinusoidal_positions():
    many = texts.sizes_caption(8, 128, 12345, True, False)
    assert many.startswith("8 heads of d_k = 128 / 8 = 16 dimensions in each of 2 layers; 12,345 learned numbers")
    assert "the same count for 1, 2, 4 or 8 heads at this d_model (counted by mha_core.cost)" in many
    assert many.endswith("Positions are sinusoidal (the fixed sine waves of Vaswani et al. 2017) for this task: its "
                         "rule is a shift (one back), the same at every position.")
    one = texts.sizes_caption(1, 32, 100, False, True)
    assert one.startswith("1 head of d_k = 32 / 1 = 32") and "the count depends on h." in one
    assert one.endswith("Positions are learned for this task: its rule is about fixed places (the first token, the "
                        "list before the separator).")


def test_the_loss_adam_and_held_out_accuracy_are_said_in_plain_words():
    intro = texts.loss_intro(64)
    assert "a fresh batch of 64 random sequences" in intro
    assert "Adam (Kingma & Ba 2015), a form of gradient descent that gives each weight its own step size" in intro
    assert "held-out accuracy: the share of right answers on sequences it never trained on" in texts.UNTRAINED
    assert texts.loss_caption(2.302585) == ("The loss is the cross-entropy of the right answers: about ln(vocabulary) "
                                            "= 2.30 when the model guesses, 0 when it is sure and right.")
    assert texts.ELHAGE in texts.INTRO and texts.OLSSON in texts.INTRO


def test_the_training_labels_and_captions():
    assert texts.train_label(600) == "Train (600 steps, a few seconds)"
    assert texts.training_progress("previous") == "Training on the previous task, step"
    assert texts.trained_caption(2.345, 7).startswith("Trained in 2.3 s on this server, with seed 7;")
    assert "run" in texts.BUSY_MESSAGE and "try again in a few seconds" in texts.BUSY_MESSAGE
    assert set(texts.STATISTIC_NOTES) == {"prev", "first", "induction", "entropy"}


def test_the_real_models_heads_are_introduced_by_their_kind():
    induction = texts.real_heads_intro("induction", "SmolLM2-135M-Instruct", 270)
    assert "the strongest of SmolLM2-135M-Instruct's 270 heads, on a repeated phrase" in induction
    assert "one place less than the phrase's length to the left of the diagonal" in induction
    previous = texts.real_heads_intro("prev", "all-MiniLM-L6-v2", 72)
    assert "Clark et al. 2019 in BERT" in previous and "all-MiniLM-L6-v2's 72 heads" in previous
    assert texts.not_installed("M", "pip install m") == ("M is not installed on this server; add it with "
                                                         "`pip install m`.")
    assert texts.real_heads_title("M", "induction score") == ("Your strongest head beside M's strongest (induction "
                                                              "score in brackets)")
    assert texts.no_strong_head("M", "previous token", 0.5) == ("No head of M has a previous token above 0.5 on this "
                                                                "text.")


def test_what_the_real_model_reads_and_how_its_heads_are_measured():
    encoder = texts.real_reads("all-MiniLM-L6-v2", "The *cat* sat.", False, "[CLS]", "[SEP]")
    assert encoder.startswith("all-MiniLM-L6-v2 reads: `The *cat* sat.`.")
    assert "the tokens its tokenizer adds ([CLS] and [SEP]) are counted apart" in encoder
    decoder = texts.real_reads("SmolLM2", "A B A", True)
    assert "Its heads and yours are measured the same way." in decoder and "[CLS]" not in decoder


def test_the_claims_intros_and_labels_count_the_seeds():
    assert "each over 3 seeds, that is 3 trainings" in texts.claims_intro(3)
    assert texts.heads_claim_intro(64, 3).startswith("At d_model = 64, h heads of d_k = d_model / h")
    assert "with 1, 2, 4 and 8 heads, 3 seeds each" in texts.heads_claim_intro(64, 3)
    assert texts.run_heads_label(12) == "Run it (12 trainings, about a minute; runs already done are reused)"
    assert texts.prune_label((0, 1, 2)) == "Run it on your model's task (3 trainings, seeds 0, 1, 2)"
    assert texts.prune_title("Induction") == "Induction: heads switched off, least important first"


def test_the_verdict_when_one_head_is_enough():
    verdict = texts.heads_verdict([1, 2], [1.0, 0.99], [300.0, 400.0], [0, 1], 0.99, 16640)
    assert verdict.startswith("Every head count has 16,640 attention parameters per layer. 1 head: 100.0% right, 99% "
                              "after 300 steps on average; 2 heads: 99.0% right, 99% after 400 steps on average (1 run "
                              "never got there). ")
    assert "Here one wide head per layer is enough, and learns fastest" in verdict and "Michel et al. 2019" in verdict


def test_the_verdict_when_more_heads_do_better():
    verdict = texts.heads_verdict([1, 2, 4, 8], [0.6, 1.0, 1.0, 0.99], [600.0, 325.0, 325.0, 325.0], [3, 0, 0, 0],
                                  0.99, 16640)
    assert "1 head: 60.0% right, 99% after 600 steps on average (3 runs never got there)" in verdict
    assert verdict.endswith("Here 2 heads reach the best accuracy and 2 the fastest solution, at the same parameters.")
    one_best = texts.heads_verdict([1, 2], [0.5, 0.4], [500.0, 400.0], [2, 2], 0.99, 10)
    assert one_best.endswith("Here 1 head reaches the best accuracy and 2 the fastest solution, at the same "
                             "parameters.")


def test_the_pruning_texts_count_what_can_go():
    assert "Michel et al. 2019's, the size of the loss's gradient" in texts.PRUNING_INTRO
    assert texts.prune_caption(8, {"gradient": 3, "removal": 2}, 0.99) == (
        "Of the 8 heads, this many can be switched off while every run still gets 99% right: 3 by gradient; 2 by "
        "removal.")
    assert texts.smollm2_pruning_intro("S", 270, "A *b*.") == ("The same on S, all 270 heads, measured by the loss of "
                                                                "predicting each next token of this text: `A *b*.`")
    caption = texts.smollm2_prune_caption(2.5, 270, {"gradient": 40})
    assert caption.startswith("With every head the loss is 2.50. It stays within 10% of that with this many of the "
                              "270 heads switched off: 40 by gradient (counted at the points drawn).")
