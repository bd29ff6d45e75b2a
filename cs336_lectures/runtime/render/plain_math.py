"""The math of a lecture's markdown as readable plain text, for a terminal.

Formulas (`$...$` and `$$...$$`, found as our renderer finds them: math_spans.py) lose their
dollars, and their LaTeX turns into Unicode where a character exists (`\\times` ×, `\\alpha` α,
`x^2` x², `\\frac{a}{b}` (a)/(b), `\\sqrt{x}` √(x), `\\hat{y}` ŷ, `\\mathbb{R}` ℝ, `K^\\top` Kᵀ)
and into its argument otherwise (`\\text{loss}` loss). Text outside formulas is left alone:
code spans, and the dollars of "$5 and $10".

    >>> plain_math("Each token costs $6 \\\\times N$ FLOPs, $\\\\alpha \\\\le 1$")
    'Each token costs 6 × N FLOPs, α ≤ 1'
"""

from __future__ import annotations

import re
import unicodedata

from cs336_lectures.runtime.render.math_spans import rewrite_math

SYMBOLS = {
    "times": "×", "cdot": "·", "div": "÷", "pm": "±", "le": "≤", "leq": "≤", "ge": "≥", "geq": "≥",
    "ne": "≠", "neq": "≠", "approx": "≈", "sim": "~", "propto": "∝", "equiv": "≡", "infty": "∞",
    "to": "→", "rightarrow": "→", "leftarrow": "←", "Rightarrow": "⇒", "mapsto": "↦", "in": "∈",
    "notin": "∉", "subset": "⊂", "cup": "∪", "cap": "∩", "forall": "∀", "exists": "∃", "partial": "∂",
    "nabla": "∇", "ell": "ℓ", "sum": "Σ", "prod": "Π", "int": "∫", "log": "log", "exp": "exp", "max": "max",
    "min": "min", "arg": "arg", "dots": "…", "ldots": "…", "cdots": "⋯", "quad": "  ", "qquad": "    ",
    "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ε", "varepsilon": "ε", "zeta": "ζ",
    "eta": "η", "theta": "θ", "kappa": "κ", "lambda": "λ", "mu": "μ", "nu": "ν", "xi": "ξ", "pi": "π",
    "rho": "ρ", "sigma": "σ", "tau": "τ", "phi": "φ", "varphi": "φ", "chi": "χ", "psi": "ψ", "omega": "ω",
    "Gamma": "Γ", "Delta": "Δ", "Theta": "Θ", "Lambda": "Λ", "Pi": "Π", "Sigma": "Σ", "Phi": "Φ",
    "Omega": "Ω", ",": " ", ";": " ", "!": "", " ": " ", "%": "%", "$": "$", "_": "_",
    "top": "ᵀ", "intercal": "ᵀ", "|": "‖", "Vert": "‖", "lVert": "‖", "rVert": "‖", "vert": "|", "mid": "|",
    # escaped braces are literal braces: marked here, put back after the grouping braces are dropped
    "{": "\x00", "}": "\x01",
}
ACCENTS = {"hat": "\u0302", "widehat": "\u0302", "bar": "\u0304", "overline": "\u0304", "tilde": "\u0303",
           "widetilde": "\u0303", "vec": "\u20d7", "dot": "\u0307", "ddot": "\u0308"}  # combining marks
DOUBLE_STRUCK = {"R": "ℝ", "N": "ℕ", "Z": "ℤ", "Q": "ℚ", "C": "ℂ", "E": "𝔼", "P": "ℙ"}
SUPERSCRIPTS = str.maketrans("0123456789+-=()nᵀ", "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼⁽⁾ⁿᵀ")
SUBSCRIPTS = str.maketrans("0123456789+-=()", "₀₁₂₃₄₅₆₇₈₉₊₋₌₍₎")
ARGUMENT_COMMANDS = ("text", "mathrm", "mathbf", "mathit", "mathcal", "operatorname", "textbf", "boldsymbol", "mbox")

GROUP = r"\{((?:[^{}]|\{[^{}]*\})*)\}"  # a braced group, one level of nesting inside


def plain_math(markdown: str) -> str:
    """`markdown` with every formula written as plain text (code spans and plain dollars untouched)."""
    return rewrite_math(markdown, formula=lambda markup, latex: latex_text(latex), dollar="$")


def latex_text(latex: str) -> str:
    """One LaTeX formula as plain text."""
    text = latex.strip()
    for _ in range(4):  # nested fractions and roots unwrap from the inside out
        text = re.sub(r"\\[dt]?frac\s*" + GROUP + r"\s*" + GROUP, lambda m: f"({m[1]})/({m[2]})", text)
        text = re.sub(r"\\sqrt\s*" + GROUP, lambda m: f"√({m[1]})", text)
        text = re.sub(r"\\(?:" + "|".join(ARGUMENT_COMMANDS) + r")\s*" + GROUP, lambda m: m[1], text)
        text = re.sub(r"\\mathbb\s*" + GROUP, lambda m: "".join(DOUBLE_STRUCK.get(c, c) for c in m[1]), text)
        text = re.sub(r"\\(" + "|".join(ACCENTS) + r")\b\s*(?:" + GROUP + r"|(\w))",
                      lambda m: (m[2] or m[3]) + ACCENTS[m[1]], text)
    text = re.sub(r"\\(left|right|big|Big|bigg|Bigg)\b", "", text)
    text = re.sub(r"\\([A-Za-z]+|[,;! {}%$_|])", lambda m: SYMBOLS.get(m[1], m[1]), text)
    text = re.sub(r"\^" + GROUP + r"|\^(\w)", lambda m: _scripted(m[1] or m[2], SUPERSCRIPTS, "^"), text)
    text = re.sub(r"_" + GROUP + r"|_(\w)", lambda m: _scripted(m[1] or m[2], SUBSCRIPTS, "_"), text)
    text = text.replace("{", "").replace("}", "").replace("\x00", "{").replace("\x01", "}")
    return unicodedata.normalize("NFC", text)


def _scripted(body: str, table: dict, mark: str) -> str:
    """x^{2} as x², and x^{ab} as x^(ab) where a character has no script form."""
    if all(ord(char) in table for char in body):
        return body.translate(table)
    return f"{mark}{body}" if len(body) == 1 else f"{mark}({body})"
