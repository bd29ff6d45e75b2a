"""CS336 lecture 1: why build language models from scratch, and tokenization.

An executable lecture: `cs336-lectures trace lectures/lecture_01.py` runs `main()` and the
viewer shows each line with what it put on the page and the values marked `@inspect`.
The tokenizers themselves live in `cs336_lectures.tokenization`; the lecture calls them and
links to their source.
"""

import functools
from collections import Counter
from dataclasses import dataclass

import regex
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from cs336_lectures import Reference, link, plot, solution, text, translatable
from cs336_lectures.tokenization import (
    GPT2_TOKENIZER_REGEX,
    BPETokenizer,
    BPETokenizerParams,
    ByteTokenizer,
    CharacterTokenizer,
    SimpleBPETokenizer,
    Tokenizer,
    bytes_to_unicode,
    get_compression_ratio,
    get_gpt2_tokenizer,
    gpt2_files,
    merge,
    pretokenize,
    train_bpe,
    train_simple_bpe,
)


def main():
    welcome()
    why_this_course()
    industrialization()
    what_small_models_teach()
    bitter_lesson()
    current_landscape()
    executable_lectures()
    course_logistics()
    course_map()
    basics()
    systems()
    scaling_laws()
    data()
    alignment()
    efficiency_drives_design()

    tokenization_intro()
    tokenization_examples()
    character_tokenizer()
    byte_tokenizer()
    word_tokenizer()
    bpe_history()
    bpe_training()
    bpe_encoding()
    assignment_1_tokenizer()
    tokenization_summary()

    exercise_two_weeks_on_32_h100s()
    exercise_bpe_on_russian()
    exercise_compression_russian_vs_english()
    next_time()


# ----------------------------------------------------------------------
# Part 1: the course


def welcome():
    text("# CS336: Language Models from Scratch (spring 2025)")
    text("Lecture 1: why we build language models from the ground up, and tokenization.")
    text("This is the second offering of the course; the Stanford cohort grew by half, "
         "and the lectures go on YouTube for everyone.")
    link(course_website)


def why_this_course():
    text("## Why this course exists")
    text("Why build by hand what anyone can download? Because building is how you get to "
         "know the methods in detail, how you earn the standing to invent better ones, and "
         "how you learn to bend a model to a task or a domain of your own.")

    text("What worries the instructors is distance: year by year, researchers touch less "
         "of the technology they depend on.")
    text("- Eight years back, a paper meant writing and training your own model.")
    text("- Two years later, the norm was to download BERT (or similar) and fine-tune it.")
    text("- Now much work consists of prompting a closed model: GPT-4, Claude, Gemini.")
    text("Working at a higher level is faster, and that is fine as far as it goes. But a "
         "language model is not a compiler or an operating system: its abstraction leaks, "
         "and research on the foundations needs people able to open every layer.")
    text("Hence the method of this course: you understand it by building it. There is a "
         "catch, though.")


def industrialization():
    text("## Language models have been industrialized")
    text("The frontier is expensive (all figures below are rumours or announcements):")
    gpt4_parameters = 1.8e12  # @inspect gpt4_parameters
    gpt4_weights_tb = gpt4_parameters * 2 / 1e12  # @inspect gpt4_weights_tb
    text(f"- GPT-4 is rumoured to have {gpt4_parameters / 1e12:.1f} trillion parameters: in "
         f"bfloat16 (2 bytes each) its weights alone would fill {gpt4_weights_tb:.1f} TB.")
    link(gpt4_size_article)
    text("- Training GPT-4 is said to have cost $100 million.")
    link(gpt4_cost_article)
    text("- xAI is building a cluster of 200,000 H100s to train Grok.")
    link(xai_cluster_article)
    stargate_per_year = 500e9 / 4  # @inspect stargate_per_year
    text(f"- Stargate, led by SoftBank and OpenAI with Oracle and MGX, plans $500 billion over 4 years, "
         f"${stargate_per_year / 1e9:.0f} billion a year.")
    link(stargate_announcement)
    text("How the frontier builds its models is kept private. OpenAI's GPT-4 report is the "
         "standard example: for reasons of competition and safety it leaves out how large the "
         "model is and how it is put together, what it was trained on, with which method, and "
         "on how much hardware and compute.")
    link(gpt4_report)


def what_small_models_teach():
    text("## More is different")
    text("Nobody in a classroom trains a frontier model. What we can afford stays below a "
         "billion parameters, and behaviour at that size can mislead about behaviour at "
         "the top.")
    text("Example 1: the share of FLOPs spent on attention versus the MLP shifts with scale. "
         "Stephen Roller showed it for the OPT models; here we compute it ourselves, from the "
         "standard per-token FLOP counts of a GPT-3-shaped layer with a 2048-token context.")
    link(roller_flops_post)
    context_length = 2048  # @inspect context_length
    # the GPT-3 family, 125M..175B
    d_models = [768, 1024, 1536, 2048, 2560, 4096, 5120, 12288]  # @inspect d_models
    layer_shares = [layer_flops_shares(d, context_length) for d in d_models]  # @inspect layer_shares @stepover
    attention_share = [shares[ATTENTION_SCORES] for shares in layer_shares]  # @inspect attention_share
    mlp_share = [shares["MLP"] for shares in layer_shares]  # @inspect mlp_share
    plot(layer_flops_figure(d_models, layer_shares))  # @stepover
    text(f"The quadratic attention part is {attention_share[0]:.0%} of a layer's FLOPs at "
         f"125M parameters and {attention_share[-1]:.1%} at 175B, where the MLP takes "
         f"{mlp_share[-1]:.0%} and the projections the rest: optimizing attention matters a "
         "lot for small models and much less for big ones, whose cost is in the matmuls "
         "with their weights.")

    text("Example 2: some abilities emerge only beyond a certain scale: accuracy stays near "
         "chance and then climbs sharply once the training compute passes a threshold.")
    link(emergent_abilities)

    text("### What transfers to frontier models?")
    text("Which lessons of a small model still hold at 100B parameters? Sort them by kind:")
    text("| what you learn | for example | still true at 100B? |\n"
         "| --- | --- | --- |\n"
         "| how the machinery works | what each part of a Transformer computes; how a model is split over GPUs | yes |\n"
         "| how to think about cost | count the FLOPs of everything; treat size as the variable to study | yes |\n"
         "| which choices pay off | a data mix or a change to the model that lowers the loss | partly |")
    text("The first two rows are the course's core, taught in full. The third depends on "
         "scale (a trick that helps at 100M parameters can do nothing at 100B), so a "
         "classroom can only give part of it.")
    text("And some intuitions have no explanation behind them at all, only experiments "
         "that came out well. The paper that introduced SwiGLU, by Noam Shazeer, ends by "
         "owning up to it with a joke: it has no theory for why the gated variants win, and "
         "puts their success down to divine benevolence.")
    link(glu_variants)


def bitter_lesson():
    text("## The bitter lesson, read correctly")
    link(bitter_lesson_essay)
    text("Sutton's essay is often summed up as \"scale beats cleverness, so algorithms do "
         "not matter\". That misses its point, which is that the methods worth having are "
         "the ones that keep paying off as compute grows.")
    text("$$\\text{accuracy} = \\text{efficiency} \\times \\text{resources}$$")
    text("Efficiency is a factor of that product, and the bigger the run the more a "
         "wasted percent costs. Algorithms alone made ImageNet training 44x cheaper "
         "between 2012 and 2019:")
    link(algorithmic_efficiency)
    yearly_gain = 44 ** (1 / 7)  # @inspect yearly_gain
    text(f"About {yearly_gain:.2f}x a year, compounded over seven years.")
    text("So every unit of this course asks one question: **with this much compute and "
         "this much data, how good a model can we get?** That is a question about "
         "efficiency.")


def current_landscape():
    text("## How we got here")
    text("Predicting the next word is an old idea. Shannon used it in 1951 to measure how "
         "much information English carries, and for decades counts of short word sequences "
         "(n-grams) were the language models inside translation and speech systems.")
    link(shannon1951)
    link(brants2007)

    text("### Four ideas from the deep-learning decade")
    text("Today's models combine pieces that appeared separately, most of them in machine "
         "translation research:")
    text("- **a network predicts the next word**: Bengio and colleagues did it in 2003, long "
         "before the hardware made it practical;")
    link(bengio2003)
    text("- **read a whole sentence, then write another**: the encoder-decoder of 2014, "
         "soon given *attention*, a learned way to look back at the relevant input words; "
         "in 2017 the Transformer kept the attention and dropped the recurrence;")
    link(sutskever2014)
    link(bahdanau2014)
    link(transformer2017)
    link(adam2014)
    text("- **activate only part of a model** per token: the sparse mixture of experts, 2017;")
    link(moe2017)
    text("- **spread one model over many accelerators**, by layers, by tensors or by "
         "sharding its optimizer state (2018 and 2019).")
    link(gpipe2018)
    link(zero2019)
    link(megatron2019)
    text("(Adam, the optimizer most of these models are still trained with, also dates "
         "from 2014.)")

    text("### Pretrain once, reuse everywhere")
    text("Around 2018 a recipe took hold: train a large network on raw text first, then adapt "
         "it to each task. ELMo did it with an LSTM, BERT with a Transformer, and Google's T5 "
         "(11B parameters) went further by phrasing every task as turning one text into "
         "another.")
    link(elmo2018)
    link(bert2018)
    link(t5_2019)

    text("### Scale becomes the strategy")
    text("OpenAI then bet on size. GPT-2 (1.5B parameters, 2019) wrote fluent paragraphs and "
         "could do some tasks it was never trained on; its weights were released step by "
         "step. In 2020 scaling laws showed that loss falls predictably as models, data and "
         "compute grow, which turned a large training run from a gamble into a forecast. "
         "GPT-3 (175B) followed that year: it learns a task from examples placed in its "
         "prompt, and its weights were never released.")
    link(gpt2_2019)
    link(kaplan2020)
    link(gpt3_2020)
    text("Bigger was not automatically better: Google's PaLM reached 540B parameters but saw "
         "too little data for its size, and DeepMind's Chinchilla (70B, 2022) worked out how "
         "a fixed compute budget should be split between parameters and tokens.")
    link(palm2022)
    link(chinchilla2022)

    text("### The open-model answer")
    text("As the leading labs stopped publishing, others released models and data. "
         "EleutherAI assembled The Pile and trained GPT-J on it; Meta's OPT (175B) "
         "reproduced GPT-3 and documented the hardware failures it met along the way; the "
         "BigScience collaboration's BLOOM took care to record where its data came from. "
         "Since then Meta's Llama series, Alibaba's Qwen, DeepSeek's models and AI2's OLMo "
         "have kept open models close behind the frontier.")
    link(the_pile)
    link(gpt_j)
    link(opt2022)
    link(bloom2022)
    link(llama2023)
    link(llama2_2023)
    link(llama3_2024)
    link(qwen25_2024)
    link(deepseek_llm_2024)
    link(deepseek_v2_2024)
    link(deepseek_v3_2024)
    link(olmo2024)
    link(olmo2_2024)

    text("### Levels of openness")
    text("- **Closed**, like GPT-4o: you may send requests to an API; that is all.")
    text("- **Open weights**, like DeepSeek: you can download the model and read how it is "
         "built and partly how it was trained, but the data stays secret.")
    text("- **Open source**, like OLMo: weights, data and a detailed paper. Even here the "
         "reasons for many choices, and the experiments that failed, mostly go untold.")
    text("Frontier models in spring 2025: OpenAI's o3, Anthropic's Claude 3.7 Sonnet, xAI's "
         "Grok 3, Google's Gemini 2.5, Meta's Llama 3.3, DeepSeek's r1, Alibaba's Qwen 2.5 "
         "Max, Tencent's Hunyuan-T1.")


def executable_lectures():
    text("## What this program is")
    text("An *executable lecture*: running the program is giving the lecture. You can read "
         "and run the code (everything is code!), step through it, and watch values change:")
    total = 0  # @inspect total
    for x in [1, 2, 3]:  # @inspect x
        total += x  # @inspect total
    text("Headings give the lecture a structure you can navigate, and links jump straight "
         "into the implementation of a concept, for example the BPE tokenizer used below:")
    link(BPETokenizer)


def course_logistics():
    text("## Logistics")
    text("Everything (lectures, assignments) is public, so the course can be followed on "
         "one's own; lectures are recorded through CGOE (formerly SCPD) and go on YouTube "
         "after a delay, and the course is planned to run again next year.")
    text("It is a 5-unit course, and heavy: one student in 2024 reported that the first "
         "assignment alone matched all five CS 224n assignments plus the final project.")
    text("Take it if you need to understand how things work and want to build research "
         "engineering muscle. Skip it if you want to do research this term, want the "
         "newest techniques (multimodality, RAG...), or just want good results in an "
         "applied domain (prompt or fine-tune an existing model instead).")
    text("Compute is donated by Together AI; read the course's cluster guide before using "
         "it, and start assignments early: the cluster fills up before deadlines.")
    link(cluster_guide)
    link(course_website)
    text("A word on code assistants (Copilot, Cursor and the like): code one of them writes "
         "for you is code you did not learn to write. How far you lean on them is your call.")


def course_map():
    text("## It is all about efficiency")
    text("The resources are data and hardware, and hardware means compute, memory and the "
         "bandwidth between chips. Suppose you are handed a Common Crawl dump and 32 H100s "
         "for two weeks. Which model do you train, and how?")
    text("Design decisions run all the way down the pipeline, and each stage is a "
         "choice of how to spend the budget:")
    plot(design_decisions_figure(DESIGN_DECISIONS))  # @stepover
    text("## The course in five units")
    text("1. **Basics**: a working version of the whole pipeline.")
    text("2. **Systems**: the most out of the hardware.")
    text("3. **Scaling laws**: small experiments that predict large ones.")
    text("4. **Data**: what the model should learn from.")
    text("5. **Alignment**: turning a base model into a useful one.")
    text("There are 5 assignments, one per unit. No scaffolding code, but unit tests and "
         "adapter interfaces check correctness; develop locally, then benchmark (accuracy "
         "and speed) on the cluster. Some have a leaderboard.")


def basics():
    text("## Unit 1: basics")
    text("The first unit builds the whole pipeline end to end, simply: a tokenizer, a "
         "model, a training loop.")
    text("**Tokenization** maps text to a list of integers and back again, roughly by "
         "cutting the text into frequently seen chunks. We use byte-pair encoding (BPE).")
    link(sennrich2016)
    text("Models that read raw bytes and skip the tokenizer exist and look promising; "
         "none has been trained at frontier scale yet.")
    link(byt5)
    link(megabyte)
    link(blt)
    link(tfree)
    text("**Architecture.** The 2017 Transformer is the starting point, and nearly every "
         "part of its block has been questioned since. The questions, and the answers in use "
         "today (assignment 1 builds one modern set: pre-norm RMSNorm, RoPE, SwiGLU; the "
         "rest comes up in later lectures):")
    text("| question about the block | answers in use |\n"
         "| --- | --- |\n"
         "| Does attention look at every earlier token? | yes (full); only a recent window; a linear-cost approximation |\n"
         "| Does each head keep its own keys and values? | yes; heads share them (GQA); they are compressed (MLA) |\n"
         "| How does a token know where it is? | added sinusoids; rotated queries and keys (RoPE) |\n"
         "| Which nonlinearity inside the MLP? | ReLU; a gated unit such as SwiGLU |\n"
         "| Is the MLP one network or many? | dense; a mixture of experts picking a few per token |\n"
         "| How are activations normalized, and where? | LayerNorm or the cheaper RMSNorm; before each sublayer (pre-norm) or after (post-norm) |\n"
         "| Is attention needed at all? | state-space and long-convolution models such as Hyena replace it |")
    link(transformer2017)
    link(mistral7b)
    link(linear_attention)
    link(gqa)
    link(deepseek_v2_2024)
    link(roformer)
    link(glu_variants)
    link(moe2017)
    link(layernorm)
    link(rmsnorm)
    link(prenorm)
    link(hyena)
    text("**Training.** Around the model sit the choices of how to fit it: the optimizer "
         "(AdamW, or newer ones such as Muon and SOAP), how the learning rate changes over the "
         "run (a cosine decay, or warmup-stable-decay, WSD), the batch size (beyond a "
         "*critical* batch size, larger batches stop paying off), regularization (dropout, "
         "weight decay), and hyperparameters such as the number of heads or the hidden size, "
         "usually found by grid search.")
    link(adamw)
    link(muon)
    link(soap)
    link(cosine_schedule)
    link(wsd_schedule)
    link(large_batch)
    text("**Assignment 1**: implement a BPE tokenizer, a Transformer, cross-entropy, AdamW "
         "and a training loop; train on TinyStories and OpenWebText; leaderboard: lowest "
         "OpenWebText perplexity in 90 minutes on one H100.")
    link(assignment1)
    link(tinystories)


def systems():
    text("## Unit 2: systems")
    text("The second unit is about getting every FLOP the hardware has: kernels, "
         "parallelism and inference.")
    text("**Kernels.** In Horace He's analogy the compute units of a GPU such as the A100 "
         "are a factory. Its large, slow memory (DRAM) is a warehouse down the road, and the "
         "small, fast memory (SRAM) is the storage on the factory floor. Fast code keeps the "
         "factory busy and the road quiet: it arranges the work so that data crosses as "
         "rarely as possible. "
         "Kernels are written in CUDA, Triton, CUTLASS or ThunderKittens.")
    link(go_brrr)
    a100_levels = a100_memory_levels()  # @inspect a100_levels @stepover
    registers, shared_memory, l2_cache, hbm = a100_levels
    text(f"On an A100 the registers ({registers.megabytes:.0f} MB over 108 SMs) and the L1 / "
         f"shared memory ({shared_memory.megabytes:.0f} MB) together hold more than the "
         f"{l2_cache.megabytes:.0f} MB L2 cache, and shared memory is read at about "
         f"{shared_memory.terabytes_per_sec:.1f} TB/s, against {hbm.terabytes_per_sec:.2f} TB/s "
         "for HBM: the road to the warehouse is about ten times narrower than the one inside "
         "the factory.")
    link(a100_whitepaper)
    plot(memory_hierarchy_figure(a100_levels))  # @stepover
    text("**Parallelism.** Put 8 A100s in a box and the road between chips is slower "
         "still, so the same rule applies one level up. Data moves through collective "
         "operations (gather, reduce, all-reduce); the parameters, activations, gradients "
         "and optimizer state are split across the GPUs; and the work is divided along the "
         "batch (data parallel), inside layers (tensor), across layers (pipeline) or along "
         "the sequence.")
    text("**Inference**, producing tokens for a prompt, is how a model gets used, and "
         "reinforcement learning, test-time compute and evaluation all run it too. Training "
         "is paid once, inference on every request, so across the world inference now "
         "takes more compute.")
    text("It has two phases: **prefill** processes the given prompt tokens all at once, like "
         "training, and is compute-bound; **decode** produces one token at a time and is "
         "memory-bound.")
    # An H100 SXM: dense bfloat16 FLOP/s and HBM3 bytes/s, from NVIDIA's datasheet.
    h100_flop_per_sec, h100_bytes_per_sec = 989.5e12, 3.35e12
    ridge_flops_per_byte = h100_flop_per_sec / h100_bytes_per_sec  # @inspect ridge_flops_per_byte
    prompt_tokens = 1024  # @inspect prompt_tokens
    # T tokens through a bfloat16 weight matrix: 2 T FLOPs per weight, 2 bytes per weight read
    flops_per_byte = {translatable("prefill"): 2 * prompt_tokens / 2, translatable("decode"): 2 * 1 / 2}  # @inspect flops_per_byte
    text(f"Why: pushing T tokens through a weight matrix does about T FLOPs for every byte of "
         f"weights read from memory. An H100 can do {ridge_flops_per_byte:.0f} FLOPs in the "
         f"time it reads one byte, so a {prompt_tokens}-token prefill keeps its cores busy, "
         f"while decoding, at {flops_per_byte['decode']:g} FLOP per byte, leaves them waiting "
         "for memory:")
    link(h100_datasheet)
    plot(prefill_decode_figure(flops_per_byte, ridge_flops_per_byte))  # @stepover
    text("Faster decoding: a cheaper model (pruning, quantization, distillation); "
         "speculative decoding (a small draft model proposes several tokens and the full "
         "model checks them in parallel, so the result is exact); systems tricks such as the "
         "KV cache and batching.")
    text("**Assignment 2**: a fused RMSNorm kernel in Triton, distributed data-parallel "
         "training, optimizer state sharding, benchmarking and profiling.")
    link(assignment2)


def scaling_laws():
    text("## Unit 3: scaling laws")
    text("The third unit uses cheap experiments to forecast expensive ones: which "
         "hyperparameters to pick at scale, and what loss to expect.")
    text("The classic case: a budget of $C$ FLOPs can buy a larger model ($N$ parameters) "
         "or more training tokens ($D$). Compute-optimal scaling laws say how to split it.")
    link(kaplan2020)
    link(chinchilla2022)
    text("The short version: $D^* = 20 N^*$.")
    chinchilla_params = 1.4e9  # @inspect chinchilla_params
    chinchilla_tokens = 20 * chinchilla_params  # @inspect chinchilla_tokens
    chinchilla_flops = 6 * chinchilla_params * chinchilla_tokens  # @inspect chinchilla_flops
    text(f"A {chinchilla_params / 1e9:.1f}B-parameter model should see "
         f"{chinchilla_tokens / 1e9:.0f}B tokens, about {chinchilla_flops:.1e} FLOPs by the "
         "rule training FLOPs = 6 x parameters x tokens (derived in lecture 2, where the 6 "
         "is counted out). With $D = 20N$ that rule reads $C = 120 N^2$, so each budget has "
         "its model size:")
    budgets = [1e19, 1e20, 1e21, 1e22, 1e23, 1e24, 1e25]  # @inspect budgets
    optimal_params = [(budget / 120) ** 0.5 for budget in budgets]  # @inspect optimal_params @stepover
    plot(compute_optimal_figure(budgets, optimal_params))  # @stepover
    text("Where the rule comes from: fix a budget $C$ and slide along it, trading parameters "
         "for tokens ($D = C / 6N$). Chinchilla fitted a formula for the loss of such runs, "
         "$L(N, D) = E + A / N^\\alpha + B / D^\\beta$. Too small a model cannot use its data, "
         "too large a model sees too few tokens, so every budget's curve has a valley:")
    link(chinchilla2022)
    iso_flop_budgets = [1e19, 1e20, 1e21, 1e22]  # @inspect iso_flop_budgets
    valley_params = [chinchilla_optimal_params(budget) for budget in iso_flop_budgets]  # @inspect valley_params @stepover
    valley_tokens_per_param = [budget / (6 * n) / n for budget, n in zip(iso_flop_budgets, valley_params)]  # @inspect valley_tokens_per_param @stepover
    plot(iso_flop_figure(iso_flop_budgets, valley_params))  # @stepover
    text(f"The valleys move right as the budget grows, from {valley_params[0]:.2g} to "
         f"{valley_params[-1]:.2g} parameters, at {min(valley_tokens_per_param):.0f} to "
         f"{max(valley_tokens_per_param):.0f} tokens per parameter by this fit: the same "
         "order as the 20 of the rule of thumb, which comes from the paper's other fitting "
         "methods. The gap is the published fit's: Besiroglu et al. (2024) refitted the "
         "paper's own data, found this fit inconsistent with the other two methods, and "
         "their corrected fit agrees with them, at about 20 tokens per parameter.")
    link(chinchilla_replication2024)
    text("This ignores the cost of inference, which favours smaller models trained "
         "longer.")
    text("**Assignment 3**: we provide a training API (hyperparameters in, loss out) built "
         "from earlier runs; you submit runs within a FLOP budget, fit a scaling law, and "
         "predict the best hyperparameters at scale; leaderboard: lowest loss for the "
         "budget.")
    link(assignment3)


def data():
    text("## Unit 4: data")
    text("What a model can do depends on what it read: several languages, code and math "
         "each have to be in the mix on purpose.")
    link(the_pile)
    text("**Evaluation**: perplexity (the textbook measure); standardized tests (MMLU, "
         "HellaSwag, GSM8K); instruction following (AlpacaEval, IFEval, WildBench); "
         "test-time compute (chain of thought, ensembling); LM-as-a-judge for generative "
         "tasks; whole systems (RAG, agents).")
    link(mmlu)
    link(hellaswag)
    link(gsm8k)
    link(alpacaeval)
    link(ifeval)
    link(wildbench)
    text("**Curation**: data does not fall from the sky. A random sample of Common Crawl "
         "is mostly spam, boilerplate and fragments, and needs heavy processing. Sources: web pages, books, arXiv papers, GitHub code. Training on "
         "copyrighted data leans on fair use, or data gets licensed (Google pays Reddit). "
         "It comes as HTML, PDFs and directories, not text.")
    link(fair_use)
    link(reddit_google_deal)
    text("**Processing** has three steps. Extraction turns HTML or PDF into text without "
         "losing the content or all of the structure. Filtering uses classifiers to keep "
         "good documents and drop harmful ones. Deduplication, with Bloom filters or "
         "MinHash, stops the model from memorizing repeats and spending compute on them.")
    text("**Assignment 4**: convert Common Crawl HTML to text, train quality and toxicity "
         "classifiers, deduplicate with MinHash; leaderboard: lowest perplexity for a token "
         "budget.")
    link(assignment4)


@dataclass(frozen=True)
class Message:
    sender: str  # "system", "user" or "assistant"
    text: str


@dataclass(frozen=True)
class Demonstration:
    """SFT data: a conversation whose last message is the response to imitate."""
    messages: tuple[Message, ...]


@dataclass(frozen=True)
class Comparison:
    """Preference data: one prompt, two candidate replies, and which a person preferred."""
    prompt: tuple[Message, ...]
    preferred: str
    rejected: str


def alignment():
    text("## Unit 5: alignment")
    text("A base model only continues text, though it does that very well. Alignment turns "
         "it into something people can use: it should do what it is asked, answer in a "
         "chosen format, length and tone, and decline harmful requests.")
    text("### Phase 1: supervised fine-tuning (SFT)")
    text("The model is trained on (prompt, response) pairs, here as a conversation:")
    sft_data = [  # @inspect sft_data
        Demonstration(messages=(
            Message(sender="system", text="You are a helpful assistant."),
            Message(sender="user", text="What is 1 + 1?"),
            Message(sender="assistant", text="The answer is 2."),
        )),
    ]
    text("People usually write these demonstrations, and surprisingly few are needed: the "
         "abilities are already in the base model, and SFT only shows which behaviour is "
         "wanted. Training maximizes $p(\\text{response} \\mid \\text{prompt})$.")
    link(lima)
    text("### Phase 2: learning from feedback")
    text("Writing ideal answers is slow; judging is quick. So the model drafts two replies "
         "to the same prompt and a person only marks the better one:")
    preference_data = [  # @inspect preference_data
        Comparison(
            prompt=(
                Message(sender="system", text="You are a helpful assistant."),
                Message(sender="user", text="What is the best way to train a language model?"),
            ),
            preferred="You should use a large dataset and train for a long time.",
            rejected="You should use a small dataset and train for a short time.",
        ),
    ]
    text("Verifiers: formal ones (for code and math) or learned ones (LM-as-a-judge).")
    text("Algorithms: PPO from reinforcement learning; DPO, simpler, for preference data; "
         "GRPO, which drops the value function.")
    link(ppo)
    link(instructgpt)
    link(dpo)
    link(deepseekmath)
    text("**Assignment 5**: implement SFT, DPO and GRPO.")
    link(assignment5)


def efficiency_drives_design():
    text("## Efficiency drives design decisions")
    text("Ask of each unit where it saves compute, the scarce resource today, and each "
         "has an answer. The model itself: many architecture variants exist only to cut "
         "memory or FLOPs (heads that share one KV cache, attention limited to a sliding "
         "window), and tokenizers exist because raw bytes would make sequences too long "
         "for today's architectures.")
    text("The rest of the pipeline: scaling laws tune hyperparameters on small, cheap models "
         "and extrapolate; data filtering keeps junk and off-topic text from costing a "
         "gradient step, and a run reads its data about once, since many epochs are "
         "unaffordable; and alignment can start from a smaller base model when the model is "
         "tuned closely to its use.")
    text("Once compute is plentiful, data will become the bottleneck, and the trade-offs "
         "will shift.")


# ----------------------------------------------------------------------
# Part 2: tokenization


def tokenization_intro():
    text("# Tokenization")
    text("This part follows Andrej Karpathy's video on tokenization; watch it.")
    link(karpathy_tokenization_video)
    text("Raw text is a Unicode string:")
    string = "Hello, 🌍! Привет!"  # @inspect string
    text("A language model, though, assigns probabilities to sequences of tokens, and a "
         "token is normally just an integer:")
    indices = [15496, 11, 995, 0]  # @inspect indices
    text("(These four are GPT-2's ids for \"Hello\", \",\", \" world\" and \"!\".)")
    text("Something has to translate in both directions, **encode** (text to integers) and "
         "**decode** (integers to text); that something is the tokenizer:")
    link(Tokenizer)
    text("How many distinct integers it can produce is its **vocabulary size**.")


def tokenization_examples():
    text("## Tokenization in practice")
    text("An interactive tokenizer in the browser is the quickest way to build intuition.")
    link(tiktokenizer_app)
    text("Three things to try there: type a sentence and see which side of each word its "
         "space joins; type \"hello hello\" and compare the ids of the two words; type a "
         "long number and see where it is cut.")
    text("Here is OpenAI's GPT-2 tokenizer (tiktoken):")
    link(tiktoken_repo)
    link(get_gpt2_tokenizer)
    tokenizer = load_gpt2_tokenizer()
    if tokenizer is None:
        return
    string = "Hello, 🌍! Привет!"  # @inspect string
    gpt2_indices = tokenizer.encode(string)  # @inspect gpt2_indices
    gpt2_tokens = [tokenizer.decode_single_token_bytes(index) for index in gpt2_indices]  # @inspect gpt2_tokens @stepover
    reconstructed_string = tokenizer.decode(gpt2_indices)  # @inspect reconstructed_string
    assert reconstructed_string == string
    plot(token_spans_figure(string, gpt2_tokens, gpt2_indices))  # @stepover
    text("How good is a tokenizer? Its **compression ratio** is the number of UTF-8 bytes "
         "per token:")
    link(get_compression_ratio)
    gpt2_compression_ratio = get_compression_ratio(string, gpt2_indices)  # @inspect gpt2_compression_ratio
    text(f"{len(string.encode('utf-8'))} bytes in {len(gpt2_indices)} tokens. \"Hello\", "
         "\",\" and \"!\" are single tokens; the emoji (with the space before it) is cut "
         "into several tokens through the middle of its 4 bytes, and the Cyrillic word "
         "falls apart into pieces of a letter or two.")
    text("The observations above, token by token. Spaces and numbers first:")
    observed = tokenizer.encode("hello world! 12345678")  # @inspect observed
    observed_tokens = [tokenizer.decode_single_token_bytes(index) for index in observed]  # @inspect observed_tokens @stepover
    text(f"\" world\" carries its space, and the number is cut into "
         f"{', '.join(repr(token.decode()) for token in observed_tokens if token.strip().isdigit())}.")
    text("Then position: the same lowercase word twice, so that only its place differs:")
    position_ids = tokenizer.encode("hello hello")  # @inspect position_ids
    text(f"\"hello\" at the very start is id {position_ids[0]}; after a space it is "
         f"\" hello\", id {position_ids[1]}: a different token for the same word.")


def character_tokenizer():
    text("## Character-based tokenization")
    text("A Unicode string is a sequence of characters, and each character has an integer "
         "code point: `ord` maps one way, `chr` the other.")
    a_code_point = ord("a")  # @inspect a_code_point
    earth_code_point = ord("🌍")  # @inspect earth_code_point
    assert chr(a_code_point) == "a" and chr(earth_code_point) == "🌍"
    link(CharacterTokenizer)
    tokenizer = CharacterTokenizer()
    string = "Hello, 🌍! Привет!"  # @inspect string
    character_indices = tokenizer.encode(string)  # @inspect character_indices
    assert tokenizer.decode(character_indices) == string
    character_vocabulary_size = max(character_indices) + 1  # @inspect character_vocabulary_size
    text("That is only a lower bound on the vocabulary: Unicode has about 150,000 "
         "characters.")
    link(unicode_characters)
    character_compression_ratio = get_compression_ratio(string, character_indices)  # @inspect character_compression_ratio
    text("Problems:")
    text("- Every code point needs its own row in the embedding table: a huge vocabulary.")
    text("- Most of those rows are for characters like 🌍 that almost never occur, so "
         "they are poorly trained and waste capacity.")


def byte_tokenizer():
    text("## Byte-based tokenization")
    text("A string can also be a sequence of bytes, integers from 0 to 255. UTF-8, the most "
         "common encoding, spends one byte on some characters and several on others:")
    link(utf8_wikipedia)
    a_bytes = "a".encode("utf-8")  # @inspect a_bytes
    earth_bytes = "🌍".encode("utf-8")  # @inspect earth_bytes
    link(ByteTokenizer)
    tokenizer = ByteTokenizer()
    string = "Hello, 🌍! Привет!"  # @inspect string
    byte_indices = tokenizer.encode(string)  # @inspect byte_indices
    assert tokenizer.decode(byte_indices) == string
    byte_vocabulary_size = 256  # @inspect byte_vocabulary_size
    byte_compression_ratio = get_compression_ratio(string, byte_indices)  # @inspect byte_compression_ratio
    text("Only 256 ids, which is lovely. But one token per byte means no compression at "
         "all: a page of text becomes thousands of tokens, and since attention costs grow "
         "with the square of the length, that is the expensive direction to go.")


def word_tokenizer():
    text("## Word-based tokenization")
    text("Classic NLP pipelines cut text into words first. A crude regex does that:")
    string = "I'll say supercalifragilisticexpialidocious!"  # @inspect string
    simple_segments = regex.findall(r"\w+|.", string)  # @inspect simple_segments
    text("That keeps runs of letters and digits together. GPT-2 uses a finer pattern that "
         "keeps the leading space with the word and treats contractions specially:")
    text(GPT2_TOKENIZER_REGEX, verbatim=True)
    gpt2_segments = regex.findall(GPT2_TOKENIZER_REGEX, string)  # @inspect gpt2_segments
    text("The package's pre-tokenizer applies the same pattern (and keeps special tokens "
         "whole):")
    link(pretokenize)
    word_compression_ratio = get_compression_ratio(string, gpt2_segments)  # @inspect word_compression_ratio
    text("A word tokenizer would then number the segments, and its vocabulary would be "
         "whatever segments the training data happened to hold: no fixed size, and "
         "enormous, as for characters. Most of those words are rare, so their embeddings "
         "are seen a few times and learn little.")
    text("Worse, a word missing from the training data has no id at all. It becomes a "
         "catch-all UNK token: the text loses information, and perplexities computed over "
         "UNKs cannot be compared.")


def bpe_history():
    text("## Byte-pair encoding (BPE)")
    link(bpe_wikipedia)
    text("BPE started life in 1994 as a compression scheme by Philip Gage. In 2016 "
         "Sennrich et al. brought it to neural machine translation, which until then had "
         "worked on words. GPT-1 (2018) already tokenized with BPE; GPT-2 ran it on bytes "
         "instead of characters (byte-level BPE), so that every text has an encoding and no "
         "token is ever unknown.")
    link(gage1994)
    link(sennrich2016)
    link(gpt1_2018)
    link(gpt2_2019)
    text("Instead of fixing the vocabulary by hand, BPE *learns* it from a corpus: "
         "whatever byte sequences occur often earn a token of their own, and anything rare "
         "is spelled out from smaller pieces.")
    text("GPT-2 first splits text into segments with the word pattern above, then runs BPE "
         "inside each segment. The algorithm: start with every byte as a token and "
         "repeatedly merge the most frequent pair of adjacent tokens.")


def bpe_training():
    text("## Training BPE, one merge at a time")
    string = "the cat in the hat"  # @inspect string
    indices = list(string.encode("utf-8"))  # @inspect indices
    # index -> bytes, one entry per byte to start with
    vocab = {index: bytes([index]) for index in range(256)}  # @stepover
    merges = {}  # @inspect merges
    text("Each merge counts adjacent pairs, takes the most frequent one (this simple "
         "version breaks ties by taking the pair it met first) and replaces it everywhere "
         "with a new index:")
    link(merge)
    for step in range(3):  # @inspect step
        counts = Counter(zip(indices, indices[1:]))  # @inspect counts
        pair = max(counts, key=counts.get)  # @inspect pair
        tied = [other for other in counts if counts[other] == counts[pair] and other != pair]  # @inspect tied @stepover
        new_index = 256 + step  # @inspect new_index
        vocab[new_index] = vocab[pair[0]] + vocab[pair[1]]
        new_token = vocab[new_index]  # @inspect new_token
        merges[pair] = new_index  # @inspect merges
        indices = merge(indices, pair, new_index)  # @inspect indices
        # two whole sentences, not one glued from pieces, so that each translates as a template
        if tied:
            text(f"Merge {step + 1}: `{vocab[pair[0]]!r}` + `{vocab[pair[1]]!r}`, seen {counts[pair]} times, "
                 f"tied with {len(tied)} other pair(s).")
        else:
            text(f"Merge {step + 1}: `{vocab[pair[0]]!r}` + `{vocab[pair[1]]!r}`, seen {counts[pair]} times.")
    plot(bpe_merges_figure(string, list(merges), vocab))  # @stepover
    text("The package wraps this loop as a function returning the parameters of a "
         "tokenizer (its vocabulary and merges):")
    link(train_simple_bpe)
    link(BPETokenizerParams)
    params = train_simple_bpe(string, num_merges=3)
    bpe_merges = params.merges  # @inspect bpe_merges
    assert bpe_merges == merges


def bpe_encoding():
    text("## Using the BPE tokenizer")
    params = train_simple_bpe("the cat in the hat", num_merges=3)
    link(SimpleBPETokenizer)
    tokenizer = SimpleBPETokenizer(params)
    text("Encoding turns the text into bytes and applies every merge in the order it was "
         "learned; decoding concatenates the bytes of each token, then decodes UTF-8 once "
         "at the end.")
    string = "the quick brown fox"  # @inspect string
    bpe_indices = tokenizer.encode(string)  # @inspect bpe_indices
    first_token = params.vocab[bpe_indices[0]]  # @inspect first_token
    decoded = tokenizer.decode(bpe_indices)  # @inspect decoded
    assert decoded == string
    bpe_compression_ratio = get_compression_ratio(string, bpe_indices)  # @inspect bpe_compression_ratio
    text(f"The {len(params.merges)} merges only ever build {first_token.decode()!r}, so the "
         f"other {len(bpe_indices) - 1} tokens of this text are single bytes: "
         f"{bpe_compression_ratio:.2f} bytes per token.")


def assignment_1_tokenizer():
    text("## What assignment 1 adds")
    text("- The `encode` above tries all merges in turn; a real one only looks at pairs "
         "that actually occur.")
    text("- Special tokens such as `<|endoftext|>` must pass through whole.")
    text("- Text is first split with the GPT-2 pattern, and merges stay inside a segment.")
    text("- Speed matters: the corpora are gigabytes.")
    text("The package's full tokenizer does all of that. A small run, on text with a "
         "special token:")
    link(train_bpe)
    link(BPETokenizer)
    corpus = "the cat in the hat<|endoftext|>the hat on the cat<|endoftext|>" * 3
    vocab_size = 262  # @inspect vocab_size
    vocab, merges = train_bpe_on_text(corpus, vocab_size=vocab_size, special_tokens=["<|endoftext|>"])
    learned_merges = merges  # @inspect learned_merges
    text(f"A vocabulary of {vocab_size} holds 1 special token and 256 bytes, which leaves "
         f"room for exactly {len(learned_merges)} merges.")

    text("### How the ids are laid out")
    special_token = vocab[0]  # @inspect special_token
    space_id = next(index for index, token in vocab.items() if token == b" ")  # @inspect space_id
    text(f"Special tokens come first (id 0 here). The 256 bytes follow in GPT-2's byte order, "
         f"which lists the printable bytes before the others, so byte 32, the space, lands at "
         f"id {space_id}. Merged tokens take the ids after the bytes, in the order learned.")
    link(bytes_to_unicode)

    text("### Why no token here ends in a space")
    segments = [segment for part in corpus.split("<|endoftext|>")  # @inspect segments @stepover
                for segment in regex.findall(GPT2_TOKENIZER_REGEX, part)]
    text("The GPT-2 pattern glues a space to the *front* of the next word, so a space can "
         "start a pre-token but never end one. The toy trainer above, working on the raw "
         "string, learned `the ` with its trailing space; here that token cannot arise, and "
         "`the` is learned instead.")

    text("### Breaking ties")
    pair_counts = Counter(pair for segment in segments for pair in zip(segment.encode(), segment.encode()[1:]))  # @stepover
    top_count = max(pair_counts.values())  # @inspect top_count
    tied_pairs = sorted((bytes([a]), bytes([b])) for (a, b), count in pair_counts.items() if count == top_count)  # @inspect tied_pairs @stepover
    text(f"In the first round {len(tied_pairs)} pairs are equally frequent ({top_count} "
         f"times each). The full trainer settles such ties by taking the lexicographically "
         f"greatest pair of byte strings, here {tied_pairs[-1]!r}; the trainer's first merge, "
         f"{learned_merges[0]!r}, is that pair. The toy trainer's \"first seen\" rule depends on the order "
         "of the text; this one does not, so two implementations can be compared merge by "
         "merge.")

    tokenizer = BPETokenizer(vocab, merges, special_tokens=["<|endoftext|>"])
    string = "the cat<|endoftext|>the hat"  # @inspect string
    full_bpe_indices = tokenizer.encode(string)  # @inspect full_bpe_indices
    full_bpe_tokens = [vocab[index] for index in full_bpe_indices]  # @inspect full_bpe_tokens @stepover
    assert tokenizer.decode(full_bpe_indices) == string
    text("The special token stays whole and no token spans it.")
    text("Loaded with GPT-2's own vocabulary and merges, the same class reproduces "
         "tiktoken's ids exactly:")
    gpt2 = load_gpt2_tokenizer()
    if gpt2 is None:
        return
    link(gpt2_files)
    vocab_path, merges_path = gpt2_files()
    our_gpt2 = BPETokenizer.from_files(vocab_path, merges_path, special_tokens=["<|endoftext|>"])
    string = "Hello, 🌍! Привет!<|endoftext|>"  # @inspect string
    our_gpt2_indices = our_gpt2.encode(string)  # @inspect our_gpt2_indices
    same_as_tiktoken = our_gpt2_indices == gpt2.encode(string, allowed_special="all")  # @inspect same_as_tiktoken


def tokenization_summary():
    text("## Summary")
    string = "Hello, 🌍! Привет!"  # @inspect string
    compression_ratios = {  # @inspect compression_ratios
        translatable("character"): get_compression_ratio(string, CharacterTokenizer().encode(string)),
        translatable("byte"): get_compression_ratio(string, ByteTokenizer().encode(string)),
        translatable("word (GPT-2 regex)"): get_compression_ratio(string, regex.findall(GPT2_TOKENIZER_REGEX, string)),
    }
    gpt2 = load_gpt2_tokenizer()
    if gpt2 is not None:
        compression_ratios[translatable("BPE (GPT-2)")] = get_compression_ratio(string, gpt2.encode(string))  # @inspect compression_ratios
    plot(compression_figure(string, compression_ratios))  # @stepover
    text("Words compress best but need an open-ended vocabulary; bytes need only 256 ids "
         "but compress nothing; BPE sits in between, with a vocabulary size we choose.")
    text("- A tokenizer is a pair of maps: text to integer ids, and ids back to text.")
    text("- Splitting by character, byte or word each fails somewhere: too many ids, too "
         "long sequences, or no fixed vocabulary.")
    text("- BPE lets the statistics of a corpus decide the vocabulary; a heuristic, but one "
         "that works well.")
    text("- Tokenizers are a workaround rather than a goal; models reading raw bytes may "
         "one day make them unnecessary.")


# ----------------------------------------------------------------------
# Exercises


def exercise_two_weeks_on_32_h100s():
    text("## Exercise: what two weeks on 32 H100s can train")
    text("Back to the question this lecture opened with: a Common Crawl dump and 32 H100s "
         "for two weeks. Which model, on how many tokens, makes the best use of that "
         "compute? Assume the GPUs reach 40% of their dense bfloat16 peak (MFU 0.4) and "
         "split the budget by the compute-optimal rule $D = 20 N$.")
    with solution():
        num_gpus = 32  # @inspect num_gpus
        seconds = 14 * 24 * 60 * 60  # @inspect seconds
        # dense bfloat16 FLOP/s of an H100 SXM, from NVIDIA's datasheet
        h100_flop_per_sec = 989.5e12  # @inspect h100_flop_per_sec
        mfu = 0.4  # @inspect mfu
        budget = num_gpus * seconds * h100_flop_per_sec * mfu  # @inspect budget
        num_parameters = (budget / 120) ** 0.5  # @inspect num_parameters
        num_tokens = 20 * num_parameters  # @inspect num_tokens
        text(f"Two weeks are {seconds:,} seconds. At {mfu:.0%} of "
             f"{h100_flop_per_sec / 1e12:.1f} TFLOP/s, {num_gpus} GPUs do "
             f"{budget:.2e} FLOPs in that time.")
        text(f"Training costs $C = 6 N D$ and the rule sets $D = 20 N$, so $C = 120 N^2$: "
             f"about {num_parameters / 1e9:.0f}B parameters trained on "
             f"{num_tokens / 1e9:.0f}B tokens.")
        text("The data is not the limit: FineWeb, one filtered Common Crawl, holds about 15 "
             "trillion tokens. Since the model will also be served, a smaller model trained "
             "on more of those tokens is a sound choice too.")
        link(fineweb)


def exercise_bpe_on_russian():
    text("## Exercise: BPE on Russian text and emoji")
    string = "мама мыла раму, 👋👋"  # @inspect string
    text("Train the simple BPE of this lecture on the string above, one merge at a time. "
         "After which merge is the emoji a single token, and after which one is the word "
         "\"мама\"? What do the tokens created along the way look like? Before you run "
         "anything, count bytes: UTF-8 spends two on every Cyrillic letter and four on the "
         "emoji.")
    with solution():
        num_bytes = len(string.encode("utf-8"))  # @inspect num_bytes
        params = train_simple_bpe(string, num_merges=8)
        new_tokens = [params.vocab[index] for index in sorted(params.merges.values())]  # @inspect new_tokens @stepover
        emoji_merge = new_tokens.index("👋".encode("utf-8")) + 1  # @inspect emoji_merge
        mama_merge = new_tokens.index("мама".encode("utf-8")) + 1  # @inspect mama_merge
        half_character_tokens = [token for token in new_tokens if not is_valid_utf8(token)]  # @inspect half_character_tokens @stepover
        text(f"Merge {emoji_merge} completes the emoji and merge {mama_merge} the word. Of the "
             f"{len(new_tokens)} new tokens, {len(half_character_tokens)} stop in the middle "
             f"of a character: {', '.join(f'`{token!r}`' for token in half_character_tokens)}. "
             "No UTF-8 decoder accepts such a token on its own. A decoder that turned each "
             "token into text separately would therefore fail; ours glues the bytes of all "
             "tokens together and decodes the result once.")
        tokenizer = SimpleBPETokenizer(params)
        russian_bpe_indices = tokenizer.encode(string)  # @inspect russian_bpe_indices
        assert tokenizer.decode(russian_bpe_indices) == string


def exercise_compression_russian_vs_english():
    text("## Exercise: GPT-2's compression on Russian and English")
    text("Take one paragraph written in Russian and in English, encode both with GPT-2's "
         "tokenizer and compare their compression ratios (UTF-8 bytes per token). Which "
         "language costs more tokens, by how much, and why?")
    tokenizer = load_gpt2_tokenizer()
    if tokenizer is None:
        return
    # One paragraph, written in both languages for this exercise.
    russian = ("Токенизатор разрезает текст на куски и даёт каждому куску номер из своего "
               "словаря. Чем чаще кусок встречался в обучающих данных, тем вероятнее, что он "
               "получил собственный токен. Поэтому текст на языке, которого в данных было "
               "мало, рассыпается на множество коротких токенов.")
    english = ("A tokenizer cuts text into pieces and gives each piece a number from its "
               "vocabulary. The more often a piece appeared in the training data, the more "
               "likely it is to have a token of its own. That is why text in a language the "
               "data held little of falls apart into many short tokens.")
    with solution():
        russian_bytes_per_character = len(russian.encode()) / len(russian)  # @inspect russian_bytes_per_character
        english_bytes_per_character = len(english.encode()) / len(english)  # @inspect english_bytes_per_character
        russian_ids = tokenizer.encode(russian)
        english_ids = tokenizer.encode(english)
        russian_num_tokens = len(russian_ids)  # @inspect russian_num_tokens
        english_num_tokens = len(english_ids)  # @inspect english_num_tokens
        russian_compression_ratio = get_compression_ratio(russian, russian_ids)  # @inspect russian_compression_ratio
        english_compression_ratio = get_compression_ratio(english, english_ids)  # @inspect english_compression_ratio
        token_cost_ratio = russian_num_tokens / english_num_tokens  # @inspect token_cost_ratio
        russian_characters_per_token = len(russian) / russian_num_tokens  # @inspect russian_characters_per_token
        text(f"English gets {english_compression_ratio:.1f} bytes into a token, Russian only "
             f"{russian_compression_ratio:.1f}, and the same paragraph takes "
             f"{token_cost_ratio:.1f} times as many tokens in Russian. Two effects multiply. "
             f"The Russian text is already longer in bytes ({russian_bytes_per_character:.1f} "
             f"bytes per character against {english_bytes_per_character:.1f}), because UTF-8 "
             "spends two bytes on a Cyrillic letter. And GPT-2's merges were learned from "
             "mostly English web pages: frequent English words became single tokens, while "
             "Cyrillic byte pairs seldom earned merges, so a Russian token holds "
             f"{russian_characters_per_token:.2f} characters on average, less than one letter. "
             "The price of more tokens: longer sequences, more compute per sentence, and less "
             "text in the same context window.")


def next_time():
    text("## Next time")
    text("Lecture 2 opens up PyTorch: tensors, models, optimizers and the training loop, "
         "with a count of the memory and FLOPs every piece costs.")


# ----------------------------------------------------------------------
# Helpers used by the lecture (figures, small checks)


def load_gpt2_tokenizer():
    """GPT-2's tokenizer, or None (with a note in the lecture) when its files are unavailable."""
    tokenizer, error = gpt2_tokenizer_or_error()
    if tokenizer is None:
        text(f"*GPT-2's tokenizer could not be loaded ({error}). Set `TIKTOKEN_CACHE_DIR` to "
             "a folder holding its files to see this part.*")
    return tokenizer


@functools.cache
def gpt2_tokenizer_or_error():
    # Cached, so that offline the download is attempted (and times out) once, not per section.
    try:
        return get_gpt2_tokenizer(), None
    except Exception as error:
        return None, f"{type(error).__name__}: {error}"


# Loaded once, as the lecture is imported: every section that uses it, and every re-run of a
# section after an edit (which starts from the state before that section), finds it loaded.
gpt2_tokenizer_or_error()


def train_bpe_on_text(corpus: str, vocab_size: int, special_tokens: list[str]):
    """`train_bpe` reads a file: write the corpus to a temporary one first."""
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "corpus.txt"
        path.write_text(corpus, encoding="utf-8")
        return train_bpe(path, vocab_size, special_tokens)


def is_valid_utf8(token: bytes) -> bool:
    try:
        token.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


def compression_figure(string: str, ratios: dict[str, float]):
    figure = Figure(figsize=(6, 2.6))
    axes = figure.subplots()
    axes.barh(list(ratios), list(ratios.values()), color="#5bc0de")
    for row, ratio in enumerate(ratios.values()):
        axes.text(ratio, row, f" {ratio:.2f}", va="center", fontsize=9)
    axes.invert_yaxis()
    axes.set_xlabel("UTF-8 bytes per token (higher is better)")
    # No emoji in the title: the plotting fonts have no glyph for it.
    axes.set_title(f"Compression of the example string ({len(string.encode('utf-8'))} bytes)")
    axes.set_xlim(0, max(ratios.values()) * 1.2)
    figure.tight_layout()
    return figure


# Every word is marked translatable: the figure shows it, and the catalogs translate it.
DESIGN_DECISIONS = {
    translatable("data"): [translatable("sources"), translatable("processing"), translatable("filtering"),
                           translatable("deduplication"), translatable("mixing")],
    translatable("tokenization"): [translatable("bytes or subwords"), translatable("vocabulary size")],
    translatable("architecture"): [translatable("attention variant"), translatable("MLP or MoE"),
                                   translatable("normalization"), translatable("size and shape")],
    translatable("training"): [translatable("optimizer"), translatable("learning rate schedule"),
                               translatable("batch size"), translatable("precision")],
    translatable("alignment"): [translatable("SFT data"), translatable("preferences"), translatable("verifiers"),
                                translatable("algorithm")],
}


def design_decisions_figure(stages: dict[str, list[str]]):
    figure = Figure(figsize=(9, 2.8))
    axes = figure.subplots()
    for column, (stage, choices) in enumerate(stages.items()):
        x = column * 2.0
        axes.text(x, 0, stage, ha="center", va="center", fontsize=10, fontweight="bold",
                  bbox={"boxstyle": "round,pad=0.4", "facecolor": "#d9edf7", "edgecolor": "#31708f"})
        for row, choice in enumerate(choices, 1):
            axes.text(x, -0.55 * row - 0.2, choice, ha="center", va="center", fontsize=8.5, color="#333333")
        if column + 1 < len(stages):
            axes.annotate("", xy=(x + 1.3, 0), xytext=(x + 0.7, 0),
                          arrowprops={"arrowstyle": "->", "color": "#31708f"})
    axes.set_xlim(-1, 2.0 * len(stages) - 1)
    axes.set_ylim(-0.55 * max(map(len, stages.values())) - 0.6, 0.5)
    axes.axis("off")
    axes.set_title("Design decisions along the pipeline, all made under a resource budget", fontsize=10)
    figure.tight_layout()
    return figure


def token_boxes(axes, y: float, tokens: list[bytes], colors: list[str]) -> None:
    """Draw `tokens` left to right at height y as boxes as wide as their bytes, labelled with their text."""
    x = 0.0
    for token, color in zip(tokens, colors):
        width = len(token)
        axes.add_patch(Rectangle((x + 0.05, y - 0.35), width - 0.1, 0.7, facecolor=color, edgecolor="#555555"))
        label = token.decode("utf-8", errors="replace").replace(" ", "␣")
        axes.text(x + width / 2, y, label, ha="center", va="center", fontsize=9, family="monospace")
        x += width


def bpe_merges_figure(string: str, pairs: list[tuple[int, int]], vocab: dict[int, bytes]):
    """The string's tokens before the first merge and after each one; the newest token is highlighted."""
    indices = list(string.encode("utf-8"))
    rows = [(translatable(f"bytes  ({len(indices)} tokens)"), indices, None)]
    for step, pair in enumerate(pairs):
        indices = merge(indices, pair, 256 + step)
        rows.append((translatable(f"merge {step + 1}  ({len(indices)} tokens)"), indices, 256 + step))
    figure = Figure(figsize=(7.5, 0.55 * len(rows) + 0.7))
    axes = figure.subplots()
    for row, (label, row_indices, new_index) in enumerate(rows):
        y = -row
        colors = ["#f0ad4e" if index == new_index else "#d9edf7" for index in row_indices]
        token_boxes(axes, y, [vocab[index] for index in row_indices], colors)
        axes.text(-0.4, y, label, ha="right", va="center", fontsize=9)
    axes.set_xlim(-6.5, len(string.encode("utf-8")) + 0.2)
    axes.set_ylim(-len(rows) + 0.4, 0.6)
    axes.axis("off")
    axes.set_title(f"BPE on {string!r}: each merge joins the most frequent pair (new token in orange)", fontsize=10)
    figure.tight_layout()
    return figure


def token_label(token: bytes) -> str:
    """A token's text for a figure: its characters, or escaped bytes when it ends mid-character
    or holds a character the plotting fonts cannot draw (emoji)."""
    try:
        text = token.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    if text is None or any(ord(character) > 0xFFFF for character in text):
        return "".join(chr(byte) if 32 < byte < 127 else ("␣" if byte == 32 else f"\\x{byte:02x}") for byte in token)
    return text.replace(" ", "␣")


def token_spans_figure(string: str, tokens: list[bytes], ids: list[int]):
    """The string's GPT-2 tokens as coloured spans, as wide as their bytes, each with its id."""
    palette = ["#d9edf7", "#dff0d8", "#fcf8e3", "#f2dede", "#e8e0f0"]
    figure = Figure(figsize=(9, 1.9))
    axes = figure.subplots()
    x = 0.0
    for number, (token, index) in enumerate(zip(tokens, ids)):
        width = max(len(token), 1.6)  # a 1-byte token still needs room for its id
        axes.add_patch(Rectangle((x + 0.04, 0), width - 0.08, 1, facecolor=palette[number % len(palette)], edgecolor="#555555"))
        axes.text(x + width / 2, 0.62, token_label(token), ha="center", va="center", fontsize=9, family="monospace")
        axes.text(x + width / 2, 0.22, str(index), ha="center", va="center", fontsize=7.5, color="#555555")
        x += width
    axes.set_xlim(-0.2, x + 0.2)
    axes.set_ylim(-0.1, 1.1)
    axes.axis("off")
    axes.set_title(f"GPT-2 cuts the {len(string.encode('utf-8'))}-byte example into {len(tokens)} tokens "
                   "(width = bytes, number = id)", fontsize=10)
    figure.tight_layout()
    return figure


@dataclass(frozen=True)
class MemoryLevel:
    name: str
    megabytes: float
    terabytes_per_sec: float | None  # None: no published figure (registers feed the cores directly)


def a100_memory_levels() -> list[MemoryLevel]:
    """An A100 SXM 80GB's memory levels, nearest to the cores first, from NVIDIA's whitepaper.

    Per SM: 256 KB of registers, 192 KB of L1 / shared memory read at 128 bytes per clock;
    the L2 cache reads 5120 bytes per clock; HBM2e moves 2039 GB/s.
    """
    num_sms, clock_hz, kilobyte = 108, 1.41e9, 1024  # memory sizes are binary: 1 MB = 1024 KB
    return [
        MemoryLevel(translatable("registers"), num_sms * 256 / kilobyte, None),
        MemoryLevel(translatable("L1 / shared memory"), num_sms * 192 / kilobyte, num_sms * 128 * clock_hz / 1e12),
        MemoryLevel(translatable("L2 cache"), 40.0, 5120 * clock_hz / 1e12),
        MemoryLevel("HBM (DRAM)", 80e3, 2.039),
    ]


def memory_hierarchy_figure(levels: list[MemoryLevel]):
    """Capacity and read bandwidth of each memory level, side by side: capacity grows by
    thousands from the cores outwards while bandwidth falls tenfold."""
    figure = Figure(figsize=(8, 2.8))
    capacity_axes, bandwidth_axes = figure.subplots(1, 2, sharey=True)
    rows = range(len(levels))
    colors = ["#f0ad4e", "#f0ad4e", "#5bc0de", "#31708f"]  # the factory's own stores, then the road out
    capacity_axes.barh(rows, [level.megabytes for level in levels], color=colors)
    capacity_axes.set_xscale("log")
    capacity_axes.set_xlim(5, 1e6)
    capacity_axes.set_yticks(list(rows), [level.name for level in levels])
    capacity_axes.invert_yaxis()
    capacity_axes.set_xlabel("capacity (MB, log scale)")
    capacity_axes.set_title("How much it holds", fontsize=10)
    for row, level in enumerate(levels):
        if level.megabytes >= 1e3:
            size = translatable(f"{level.megabytes / 1e3:.0f} GB")
        else:
            size = translatable(f"{level.megabytes:.0f} MB")
        capacity_axes.text(level.megabytes * 1.3, row, size, va="center", fontsize=8.5)
        if level.terabytes_per_sec is None:
            bandwidth_axes.text(0.3, row, "read directly by the cores", va="center", fontsize=8.5, color="#555555")
            continue
        bandwidth_axes.barh(row, level.terabytes_per_sec, color=colors[row])
        bandwidth_axes.text(level.terabytes_per_sec + 0.3, row, f"{level.terabytes_per_sec:.1f} TB/s", va="center",
                            fontsize=8.5)
    bandwidth_axes.set_xlim(0, 25)
    bandwidth_axes.set_xlabel("read bandwidth (TB/s)")
    bandwidth_axes.set_title("How fast the cores read it", fontsize=10)
    figure.suptitle("A100 memory levels: capacity grows away from the cores, bandwidth falls", fontsize=10)
    figure.tight_layout()
    return figure


def prefill_decode_figure(flops_per_byte: dict[str, float], ridge: float):
    """Arithmetic intensity of prefill and decode against the FLOPs an H100 does per byte it reads."""
    figure = Figure(figsize=(6, 3))
    axes = figure.subplots()
    names = list(flops_per_byte)
    axes.bar(names, [flops_per_byte[name] for name in names], color=["#5cb85c", "#d9534f"], width=0.5)
    axes.axhline(ridge, color="#31708f", linestyle="--")
    axes.text(1.45, ridge * 1.15, f"H100: {ridge:.0f} FLOPs per byte read", ha="right", fontsize=8.5, color="#31708f")
    axes.text(0, flops_per_byte[names[0]] * 1.15, "compute-bound", ha="center", fontsize=8.5)
    axes.text(1, flops_per_byte[names[1]] * 1.3, "memory-bound", ha="center", fontsize=8.5)
    axes.set_yscale("log")
    axes.set_ylim(0.5, max(flops_per_byte.values()) * 4)
    axes.set_ylabel("FLOPs per byte of weights read")
    axes.set_title("Prefill works on many tokens per weight read; decode on one", fontsize=10)
    figure.tight_layout()
    return figure


# Chinchilla's fitted loss L(N, D) = E + A / N^alpha + B / D^beta (Hoffmann et al. 2022, approach 3).
CHINCHILLA_FIT = {"E": 1.69, "A": 406.4, "B": 410.7, "alpha": 0.34, "beta": 0.28}


def chinchilla_loss(num_params: float, num_tokens: float) -> float:
    fit = CHINCHILLA_FIT
    return fit["E"] + fit["A"] / num_params ** fit["alpha"] + fit["B"] / num_tokens ** fit["beta"]


def iso_flop_sizes(budget: float) -> list[float]:
    """Model sizes spanning four orders of magnitude around the budget's optimum, for one curve."""
    center = (budget / 120) ** 0.5  # D = 20 N
    return [center * 10 ** (exponent / 20) for exponent in range(-40, 41)]


def chinchilla_optimal_params(budget: float) -> float:
    """The model size at the bottom of the budget's iso-FLOP curve, D = budget / (6 N)."""
    return min(iso_flop_sizes(budget), key=lambda n: chinchilla_loss(n, budget / (6 * n)))


def iso_flop_figure(budgets: list[float], valley_params: list[float]):
    figure = Figure(figsize=(6.5, 3.4))
    axes = figure.subplots()
    for budget, best in zip(budgets, valley_params):
        sizes = iso_flop_sizes(budget)
        line, = axes.plot(sizes, [chinchilla_loss(n, budget / (6 * n)) for n in sizes], label=f"C = {budget:.0e}")
        axes.plot([best], [chinchilla_loss(best, budget / (6 * best))], marker="o", color=line.get_color())
    axes.set_xscale("log")
    axes.set_xlabel("parameters N (tokens D = C / 6N)")
    axes.set_ylabel("predicted loss")
    axes.set_ylim(2.0, 3.6)
    axes.legend(fontsize=8)
    axes.grid(True, alpha=0.3)
    axes.set_title("Iso-FLOP curves: each budget has a best model size (dots)", fontsize=10)
    figure.tight_layout()
    return figure


def compute_optimal_figure(budgets: list[float], optimal_params: list[float]):
    figure = Figure(figsize=(6, 3))
    axes = figure.subplots()
    axes.loglog(budgets, optimal_params, marker="o", label="parameters N*")
    axes.loglog(budgets, [20 * params for params in optimal_params], marker="s", label="tokens D* = 20 N*")
    axes.set_xlabel("training compute C (FLOPs)")
    axes.set_title("Compute-optimal model and data size (D* = 20 N*)")
    axes.legend()
    axes.grid(True, which="major", alpha=0.3)
    figure.tight_layout()
    return figure


PROJECTIONS = translatable("Q, K, V and output projections")
ATTENTION_SCORES = translatable("attention scores and weighted sum")


def layer_flops_shares(d_model: int, context_length: int) -> dict[str, float]:
    """Shares of one Transformer layer's forward FLOPs per token, by part.

    Per token: Q, K, V and output projections 8 d^2, the MLP (4x wide) 16 d^2, and the
    attention scores plus the weighted sum of values 4 * context * d.
    """
    flops = {PROJECTIONS: 8 * d_model**2, "MLP": 16 * d_model**2, ATTENTION_SCORES: 4 * context_length * d_model}
    total = sum(flops.values())
    return {part: count / total for part, count in flops.items()}


def layer_flops_figure(d_models: list[int], layer_shares: list[dict[str, float]]):
    figure = Figure(figsize=(6.5, 3.2))
    axes = figure.subplots()
    parts = list(layer_shares[0])
    axes.stackplot(d_models, [[100 * shares[part] for shares in layer_shares] for part in parts],
                   labels=parts, colors=["#5bc0de", "#5cb85c", "#f0ad4e"], alpha=0.85)
    axes.set_xscale("log")
    axes.set_xlim(d_models[0], d_models[-1])
    axes.set_ylim(0, 100)
    axes.set_xlabel("model width d_model (GPT-3 family, 2048-token context)")
    axes.set_ylabel("% of a layer's FLOPs")
    axes.set_title("Where a layer's FLOPs go: attention's share shrinks with scale", fontsize=10)
    axes.legend(loc="lower left", fontsize=8)
    figure.tight_layout()
    return figure


# ----------------------------------------------------------------------
# References


cluster_guide = Reference(title="CS336: how to use the course's compute cluster",
                          url="https://docs.google.com/document/d/1BSSig7zInyjDKcbNGftVxubiHlwJ-ZqahQewIzBmBOo/edit",
                          organization="Stanford CS336 staff")
course_website = Reference(title="CS336: Language Modeling from Scratch (spring 2025)",
                           url="https://stanford-cs336.github.io/spring2025/",
                           organization="Stanford University")
gpt4_report = Reference(title="GPT-4 Technical Report", url="https://arxiv.org/abs/2303.08774",
                        organization="OpenAI", date="2023")
gpt4_size_article = Reference(title="The Generative AI Future Is Now, Nvidia's Huang Says",
                              url="https://www.hpcwire.com/2024/03/19/the-generative-ai-future-is-now-nvidias-huang-says",
                              organization="HPCwire", date="2024-03-19",
                              description="mentions a 1.8-trillion-parameter GPT model")
gpt4_cost_article = Reference(title="OpenAI's CEO Says the Age of Giant AI Models Is Already Over",
                              url="https://www.wired.com/story/openai-ceo-sam-altman-the-age-of-giant-ai-models-is-already-over/",
                              organization="Wired", date="2023-04-17",
                              description="training GPT-4 cost more than $100 million")
xai_cluster_article = Reference(title="Elon Musk is doubling the world's largest AI GPU cluster",
                                url="https://www.tomshardware.com/pc-components/gpus/elon-musk-is-doubling-the-worlds-largest-ai-gpu-cluster-expanding-colossus-gpu-cluster-to-200-000-soon-has-floated-300-000-in-the-past",
                                organization="Tom's Hardware", date="2024")
stargate_announcement = Reference(title="Announcing The Stargate Project",
                                  url="https://openai.com/index/announcing-the-stargate-project/",
                                  organization="OpenAI", date="2025-01-21")
emergent_abilities = Reference(title="Emergent Abilities of Large Language Models",
                               url="https://arxiv.org/abs/2206.07682",
                               authors=("Jason Wei", "Yi Tay", "Rishi Bommasani", "et al."), date="2022")
# A post on X has no title of its own: the title names the author and the date.
roller_flops_post = Reference(title="Stephen Roller, post on X of 12 October 2022",
                              url="https://x.com/stephenroller/status/1579993017234382849",
                              authors=("Stephen Roller",), date="2022-10-12",
                              description="the share of FLOPs in attention and in the MLP for each OPT model size; "
                                          "the MLP's share grows to about 80% at 175B")
h100_datasheet = Reference(title="NVIDIA H100 Tensor Core GPU", url="https://www.nvidia.com/en-us/data-center/h100/",
                           organization="NVIDIA", description="H100 SXM: 989.5 dense bfloat16 TFLOP/s, 3.35 TB/s of HBM3")
a100_whitepaper = Reference(title="NVIDIA A100 Tensor Core GPU Architecture",
                            url="https://images.nvidia.com/aem-dam/en-zz/Solutions/data-center/nvidia-ampere-architecture-whitepaper.pdf",
                            organization="NVIDIA", date="2020")
fineweb = Reference(title="The FineWeb Datasets: Decanting the Web for the Finest Text Data at Scale",
                    url="https://arxiv.org/abs/2406.17557", authors=("Guilherme Penedo", "et al."),
                    organization="Hugging Face", date="2024")
go_brrr = Reference(title="Making Deep Learning Go Brrrr From First Principles", url="https://horace.io/brrr_intro.html",
                    authors=("Horace He",), date="2022")
reddit_google_deal = Reference(title="Reddit in AI content licensing deal with Google, sources say",
                               url="https://www.reuters.com/technology/reddit-ai-content-licensing-deal-with-google-sources-say-2024-02-22/",
                               organization="Reuters", date="2024-02-22")
glu_variants = Reference(title="GLU Variants Improve Transformer", url="https://arxiv.org/abs/2002.05202",
                         authors=("Noam Shazeer",), date="2020")
bitter_lesson_essay = Reference(title="The Bitter Lesson",
                                url="http://www.incompleteideas.net/IncIdeas/BitterLesson.html",
                                authors=("Rich Sutton",), date="2019")
algorithmic_efficiency = Reference(title="Measuring the Algorithmic Efficiency of Neural Networks",
                                   url="https://arxiv.org/abs/2005.04305",
                                   authors=("Danny Hernandez", "Tom B. Brown"), date="2020")
shannon1951 = Reference(title="Prediction and Entropy of Printed English",
                        url="https://www.princeton.edu/~wbialek/rome/refs/shannon_51.pdf",
                        authors=("Claude E. Shannon",), date="1951")
brants2007 = Reference(title="Large Language Models in Machine Translation",
                       url="https://aclanthology.org/D07-1090.pdf",
                       authors=("Thorsten Brants", "Ashok C. Popat", "Peng Xu", "Franz J. Och", "Jeffrey Dean"),
                       date="2007")
bengio2003 = Reference(title="A Neural Probabilistic Language Model",
                       url="https://www.jmlr.org/papers/volume3/bengio03a/bengio03a.pdf",
                       authors=("Yoshua Bengio", "Réjean Ducharme", "Pascal Vincent", "Christian Jauvin"),
                       date="2003")
sutskever2014 = Reference(title="Sequence to Sequence Learning with Neural Networks",
                          url="https://arxiv.org/abs/1409.3215",
                          authors=("Ilya Sutskever", "Oriol Vinyals", "Quoc V. Le"), date="2014")
adam2014 = Reference(title="Adam: A Method for Stochastic Optimization", url="https://arxiv.org/abs/1412.6980",
                     authors=("Diederik P. Kingma", "Jimmy Ba"), date="2014")
bahdanau2014 = Reference(title="Neural Machine Translation by Jointly Learning to Align and Translate",
                         url="https://arxiv.org/abs/1409.0473",
                         authors=("Dzmitry Bahdanau", "Kyunghyun Cho", "Yoshua Bengio"), date="2014")
transformer2017 = Reference(title="Attention Is All You Need", url="https://arxiv.org/abs/1706.03762",
                            authors=("Ashish Vaswani", "Noam Shazeer", "Niki Parmar", "et al."), date="2017")
moe2017 = Reference(title="Outrageously Large Neural Networks: The Sparsely-Gated Mixture-of-Experts Layer",
                    url="https://arxiv.org/abs/1701.06538",
                    authors=("Noam Shazeer", "Azalia Mirhoseini", "et al."), date="2017")
gpipe2018 = Reference(title="GPipe: Efficient Training of Giant Neural Networks using Pipeline Parallelism",
                      url="https://arxiv.org/abs/1811.06965", authors=("Yanping Huang", "et al."), date="2018")
zero2019 = Reference(title="ZeRO: Memory Optimizations Toward Training Trillion Parameter Models",
                     url="https://arxiv.org/abs/1910.02054",
                     authors=("Samyam Rajbhandari", "Jeff Rasley", "Olatunji Ruwase", "Yuxiong He"), date="2019")
megatron2019 = Reference(title="Megatron-LM: Training Multi-Billion Parameter Language Models Using Model Parallelism",
                         url="https://arxiv.org/abs/1909.08053",
                         authors=("Mohammad Shoeybi", "et al."), date="2019")
elmo2018 = Reference(title="Deep contextualized word representations", url="https://arxiv.org/abs/1802.05365",
                     authors=("Matthew E. Peters", "et al."), date="2018")
bert2018 = Reference(title="BERT: Pre-training of Deep Bidirectional Transformers for Language Understanding",
                     url="https://arxiv.org/abs/1810.04805",
                     authors=("Jacob Devlin", "Ming-Wei Chang", "Kenton Lee", "Kristina Toutanova"), date="2018")
t5_2019 = Reference(title="Exploring the Limits of Transfer Learning with a Unified Text-to-Text Transformer",
                    url="https://arxiv.org/abs/1910.10683", authors=("Colin Raffel", "et al."), date="2019")
gpt1_2018 = Reference(title="Improving Language Understanding by Generative Pre-Training",
                      url="https://cdn.openai.com/research-covers/language-unsupervised/language_understanding_paper.pdf",
                      authors=("Alec Radford", "Karthik Narasimhan", "Tim Salimans", "Ilya Sutskever"),
                      organization="OpenAI", date="2018")
gpt2_2019 = Reference(title="Language Models are Unsupervised Multitask Learners",
                      url="https://cdn.openai.com/better-language-models/language_models_are_unsupervised_multitask_learners.pdf",
                      authors=("Alec Radford", "Jeffrey Wu", "et al."), organization="OpenAI", date="2019")
kaplan2020 = Reference(title="Scaling Laws for Neural Language Models", url="https://arxiv.org/abs/2001.08361",
                       authors=("Jared Kaplan", "Sam McCandlish", "et al."), date="2020")
gpt3_2020 = Reference(title="Language Models are Few-Shot Learners", url="https://arxiv.org/abs/2005.14165",
                      authors=("Tom B. Brown", "et al."), organization="OpenAI", date="2020")
palm2022 = Reference(title="PaLM: Scaling Language Modeling with Pathways", url="https://arxiv.org/abs/2204.02311",
                     authors=("Aakanksha Chowdhery", "et al."), organization="Google", date="2022")
chinchilla2022 = Reference(title="Training Compute-Optimal Large Language Models",
                           url="https://arxiv.org/abs/2203.15556",
                           authors=("Jordan Hoffmann", "et al."), organization="DeepMind", date="2022")
chinchilla_replication2024 = Reference(title="Chinchilla Scaling: A replication attempt",
                                       url="https://arxiv.org/abs/2404.10102",
                                       authors=("Tamay Besiroglu", "Ege Erdil", "Matthew Barnett", "Josh You"),
                                       organization="Epoch AI", date="2024")
the_pile = Reference(title="The Pile: An 800GB Dataset of Diverse Text for Language Modeling",
                     url="https://arxiv.org/abs/2101.00027", authors=("Leo Gao", "et al."),
                     organization="EleutherAI", date="2020")
gpt_j = Reference(title="GPT-J-6B: a 6 billion parameter autoregressive language model",
                  url="https://github.com/kingoflolz/mesh-transformer-jax",
                  authors=("Ben Wang", "Aran Komatsuzaki"), organization="EleutherAI", date="2021")
opt2022 = Reference(title="OPT: Open Pre-trained Transformer Language Models", url="https://arxiv.org/abs/2205.01068",
                    authors=("Susan Zhang", "et al."), organization="Meta", date="2022")
bloom2022 = Reference(title="BLOOM: A 176B-Parameter Open-Access Multilingual Language Model",
                      url="https://arxiv.org/abs/2211.05100", organization="BigScience", date="2022")
llama2023 = Reference(title="LLaMA: Open and Efficient Foundation Language Models",
                      url="https://arxiv.org/abs/2302.13971", organization="Meta", date="2023")
llama2_2023 = Reference(title="Llama 2: Open Foundation and Fine-Tuned Chat Models",
                        url="https://arxiv.org/abs/2307.09288", organization="Meta", date="2023")
llama3_2024 = Reference(title="The Llama 3 Herd of Models", url="https://arxiv.org/abs/2407.21783",
                        organization="Meta", date="2024")
qwen25_2024 = Reference(title="Qwen2.5 Technical Report", url="https://arxiv.org/abs/2412.15115",
                        organization="Alibaba", date="2024")
deepseek_llm_2024 = Reference(title="DeepSeek LLM: Scaling Open-Source Language Models with Longtermism",
                              url="https://arxiv.org/abs/2401.02954", organization="DeepSeek", date="2024")
deepseek_v2_2024 = Reference(title="DeepSeek-V2: A Strong, Economical, and Efficient Mixture-of-Experts Language Model",
                             url="https://arxiv.org/abs/2405.04434", organization="DeepSeek", date="2024")
deepseek_v3_2024 = Reference(title="DeepSeek-V3 Technical Report", url="https://arxiv.org/abs/2412.19437",
                             organization="DeepSeek", date="2024")
olmo2024 = Reference(title="OLMo: Accelerating the Science of Language Models", url="https://arxiv.org/abs/2402.00838",
                     organization="AI2", date="2024")
olmo2_2024 = Reference(title="2 OLMo 2 Furious", url="https://arxiv.org/abs/2501.00656", organization="AI2",
                       date="2024")
sennrich2016 = Reference(title="Neural Machine Translation of Rare Words with Subword Units",
                         url="https://arxiv.org/abs/1508.07909",
                         authors=("Rico Sennrich", "Barry Haddow", "Alexandra Birch"), date="2016")
byt5 = Reference(title="ByT5: Towards a token-free future with pre-trained byte-to-byte models",
                 url="https://arxiv.org/abs/2105.13626", authors=("Linting Xue", "et al."), date="2021")
megabyte = Reference(title="MEGABYTE: Predicting Million-byte Sequences with Multiscale Transformers",
                     url="https://arxiv.org/abs/2305.07185", authors=("Lili Yu", "et al."), date="2023")
blt = Reference(title="Byte Latent Transformer: Patches Scale Better Than Tokens", url="https://arxiv.org/abs/2412.09871",
                authors=("Artidoro Pagnoni", "et al."), date="2024")
tfree = Reference(title="T-FREE: Tokenizer-Free Generative LLMs via Sparse Representations for Memory-Efficient Embeddings",
                  url="https://arxiv.org/abs/2406.19223", authors=("Björn Deiseroth", "et al."), date="2024")
roformer = Reference(title="RoFormer: Enhanced Transformer with Rotary Position Embedding",
                     url="https://arxiv.org/abs/2104.09864", authors=("Jianlin Su", "et al."), date="2021")
layernorm = Reference(title="Layer Normalization", url="https://arxiv.org/abs/1607.06450",
                      authors=("Jimmy Lei Ba", "Jamie Ryan Kiros", "Geoffrey E. Hinton"), date="2016")
rmsnorm = Reference(title="Root Mean Square Layer Normalization", url="https://arxiv.org/abs/1910.07467",
                    authors=("Biao Zhang", "Rico Sennrich"), date="2019")
prenorm = Reference(title="On Layer Normalization in the Transformer Architecture", url="https://arxiv.org/abs/2002.04745",
                    authors=("Ruibin Xiong", "et al."), date="2020")
mistral7b = Reference(title="Mistral 7B", url="https://arxiv.org/abs/2310.06825", organization="Mistral AI", date="2023")
linear_attention = Reference(title="Transformers are RNNs: Fast Autoregressive Transformers with Linear Attention",
                             url="https://arxiv.org/abs/2006.16236", authors=("Angelos Katharopoulos", "et al."),
                             date="2020")
gqa = Reference(title="GQA: Training Generalized Multi-Query Transformer Models from Multi-Head Checkpoints",
                url="https://arxiv.org/abs/2305.13245", authors=("Joshua Ainslie", "et al."), date="2023")
hyena = Reference(title="Hyena Hierarchy: Towards Larger Convolutional Language Models",
                  url="https://arxiv.org/abs/2302.10866", authors=("Michael Poli", "et al."), date="2023")
adamw = Reference(title="Decoupled Weight Decay Regularization", url="https://arxiv.org/abs/1711.05101",
                  authors=("Ilya Loshchilov", "Frank Hutter"), date="2017")
muon = Reference(title="Muon: An optimizer for hidden layers in neural networks",
                 url="https://kellerjordan.github.io/posts/muon/", authors=("Keller Jordan",), date="2024")
soap = Reference(title="SOAP: Improving and Stabilizing Shampoo using Adam", url="https://arxiv.org/abs/2409.11321",
                 authors=("Nikhil Vyas", "et al."), date="2024")
large_batch = Reference(title="An Empirical Model of Large-Batch Training", url="https://arxiv.org/abs/1812.06162",
                        authors=("Sam McCandlish", "Jared Kaplan", "Dario Amodei", "et al."), date="2018")
assignment1 = Reference(title="Assignment 1: basics", url="https://github.com/stanford-cs336/assignment1-basics",
                        organization="Stanford CS336", date="2025")
tinystories = Reference(title="TinyStories: How Small Can Language Models Be and Still Speak Coherent English?",
                        url="https://arxiv.org/abs/2305.07759", authors=("Ronen Eldan", "Yuanzhi Li"), date="2023")
mmlu = Reference(title="Measuring Massive Multitask Language Understanding", url="https://arxiv.org/abs/2009.03300",
                 authors=("Dan Hendrycks", "et al."), date="2020")
hellaswag = Reference(title="HellaSwag: Can a Machine Really Finish Your Sentence?", url="https://arxiv.org/abs/1905.07830",
                      authors=("Rowan Zellers", "et al."), date="2019")
gsm8k = Reference(title="Training Verifiers to Solve Math Word Problems", url="https://arxiv.org/abs/2110.14168",
                  authors=("Karl Cobbe", "et al."), date="2021")
alpacaeval = Reference(title="AlpacaEval", url="https://tatsu-lab.github.io/alpaca_eval/",
                       organization="Stanford Tatsu Lab", date="2023")
ifeval = Reference(title="Instruction-Following Evaluation for Large Language Models",
                   url="https://arxiv.org/abs/2311.07911", authors=("Jeffrey Zhou", "et al."), date="2023")
wildbench = Reference(title="WildBench: Benchmarking LLMs with Challenging Tasks from Real Users in the Wild",
                      url="https://arxiv.org/abs/2406.04770", authors=("Bill Yuchen Lin", "et al."), date="2024")
fair_use = Reference(title="Foundation Models and Fair Use", url="https://arxiv.org/abs/2303.15715",
                     authors=("Peter Henderson", "et al."), date="2023")
lima = Reference(title="LIMA: Less Is More for Alignment", url="https://arxiv.org/abs/2305.11206",
                 authors=("Chunting Zhou", "et al."), date="2023")
ppo = Reference(title="Proximal Policy Optimization Algorithms", url="https://arxiv.org/abs/1707.06347",
                authors=("John Schulman", "et al."), date="2017")
instructgpt = Reference(title="Training language models to follow instructions with human feedback",
                        url="https://arxiv.org/abs/2203.02155", authors=("Long Ouyang", "et al."), date="2022")
dpo = Reference(title="Direct Preference Optimization: Your Language Model is Secretly a Reward Model",
                url="https://arxiv.org/abs/2305.18290", authors=("Rafael Rafailov", "et al."), date="2023")
deepseekmath = Reference(title="DeepSeekMath: Pushing the Limits of Mathematical Reasoning in Open Language Models",
                         url="https://arxiv.org/abs/2402.03300", authors=("Zhihong Shao", "et al."), date="2024")
karpathy_tokenization_video = Reference(title="Let's build the GPT Tokenizer",
                                        url="https://www.youtube.com/watch?v=zduSFxRajkE",
                                        authors=("Andrej Karpathy",), date="2024")
tiktokenizer_app = Reference(title="Tiktokenizer", url="https://tiktokenizer.vercel.app/",
                             description="type text, see its tokens under several tokenizers")
tiktoken_repo = Reference(title="tiktoken", url="https://github.com/openai/tiktoken", organization="OpenAI")
unicode_characters = Reference(title="List of Unicode characters",
                               url="https://en.wikipedia.org/wiki/List_of_Unicode_characters",
                               organization="Wikipedia")
utf8_wikipedia = Reference(title="UTF-8", url="https://en.wikipedia.org/wiki/UTF-8", organization="Wikipedia")
gage1994 = Reference(title="A New Algorithm for Data Compression",
                     url="http://www.pennelynn.com/Documents/CUJ/HTML/94HTML/19940045.HTM",
                     authors=("Philip Gage",), organization="The C Users Journal", date="1994-02")
cosine_schedule = Reference(title="SGDR: Stochastic Gradient Descent with Warm Restarts",
                            url="https://arxiv.org/abs/1608.03983", authors=("Ilya Loshchilov", "Frank Hutter"),
                            date="2016", description="the cosine learning rate schedule")
wsd_schedule = Reference(title="MiniCPM: Unveiling the Potential of Small Language Models with Scalable Training Strategies",
                         url="https://arxiv.org/abs/2404.06395", authors=("Shengding Hu", "et al."), date="2024",
                         description="the warmup-stable-decay (WSD) learning rate schedule")
assignment2 = Reference(title="Assignment 2: systems", url="https://github.com/stanford-cs336/assignment2-systems",
                        organization="Stanford CS336", date="2025")
assignment3 = Reference(title="Assignment 3: scaling", url="https://github.com/stanford-cs336/assignment3-scaling",
                        organization="Stanford CS336", date="2025")
assignment4 = Reference(title="Assignment 4: data", url="https://github.com/stanford-cs336/assignment4-data",
                        organization="Stanford CS336", date="2025")
assignment5 = Reference(title="Assignment 5: alignment", url="https://github.com/stanford-cs336/assignment5-alignment",
                        organization="Stanford CS336", date="2025")
bpe_wikipedia = Reference(title="Byte pair encoding", url="https://en.wikipedia.org/wiki/Byte_pair_encoding",
                          organization="Wikipedia")


if __name__ == "__main__":
    main()
