"""One lecture, three languages: how text() strings, f-string templates included, are translated.

Trace it with `cs336-lectures trace lectures/example_i18n.py` and switch the viewer's language
(top right, or `?lang=ru` / `?lang=zh` in the URL). The translations live in
lectures/locales/ru/example_i18n.yaml and lectures/locales/zh/example_i18n.yaml; run
`cs336-lectures i18n check lectures/example_i18n.py` after editing any English below.
"""

from matplotlib.figure import Figure

from cs336_lectures import plot, text


def main():
    bytes_per_character()
    what_stays_english()


def bytes_per_character():
    text("# Counting bytes in three scripts")
    text("UTF-8 spends between one and four bytes on a character, so the same sentence costs "
         "a different number of bytes in each script.")
    sentences = {"en": "Language models read bytes.", "ru": "Языковые модели читают байты.",
                 "zh": "语言模型读取字节。"}  # @inspect sentences
    bytes_per_char = {}
    for language, sentence in sentences.items():
        num_characters = len(sentence)  # @inspect num_characters
        num_bytes = len(sentence.encode("utf-8"))  # @inspect num_bytes
        text(f"`{language}`: {num_characters} characters take {num_bytes} bytes, "
             f"{num_bytes / num_characters:.2f} bytes per character.")
        bytes_per_char[language] = num_bytes / num_characters
    plot(bytes_figure(bytes_per_char))  # @stepover
    text("## Why it matters")
    text("A byte-level tokenizer starts from these bytes, so its compression ratio "
         "$r = \\frac{\\text{bytes}}{\\text{tokens}}$ depends on the script:")
    text("$$r_{\\text{zh}} > r_{\\text{ru}} > r_{\\text{en}} \\quad \\text{at equal token counts}$$")


def what_stays_english():
    text("## What stays in English")
    text("Text computed by the program (a table built from values, say) has no fixed English "
         "to translate, and is shown as computed:")
    rows = [f"| {script} | {len(script.encode('utf-8'))} |" for script in ("a", "я", "语")]
    text("\n".join(["| character | bytes |", "| --- | --- |", *rows]))


def bytes_figure(bytes_per_char: dict[str, float]) -> Figure:
    """A bar per script; its title and axis label are translated like text() (plots drawn per language)."""
    figure = Figure(figsize=(4, 2.2))
    axes = figure.subplots()
    axes.barh(list(bytes_per_char), list(bytes_per_char.values()), color="#5b8bd0")
    axes.set_title(f"UTF-8 bytes per character, {len(bytes_per_char)} scripts")
    axes.set_xlabel("bytes per character")
    figure.tight_layout()
    return figure


if __name__ == "__main__":
    main()
