"""Math as the terminal shows it: LaTeX written as readable Unicode (cs336_lectures/runtime/render/plain_math.py)."""

from __future__ import annotations

import pytest

from cs336_lectures.runtime.render.plain_math import latex_text, plain_math


@pytest.mark.parametrize("latex, shown", [
    (r"6 \times N \cdot D", "6 × N · D"),
    (r"x^{2n} + 10^{-3}", "x²ⁿ + 10⁻³"),
    (r"\log_2 V", "log₂ V"),
    # lecture 2's Adam update: accents sit on their letter
    (r"\theta_{t+1} = \theta_t - \eta \hat m_t / (\sqrt{\hat v_t} + \epsilon)",
     "θ_(t+1) = θ_t - η m\u0302_t / (√(v\u0302_t) + ε)"),
    (r"\hat{y} \ne \bar{x} + \tilde{z}", "\u0177 ≠ x\u0304 + z\u0303"),  # composed where Unicode has the letter
    (r"W \in \mathbb{R}^{d \times d}", "W ∈ ℝ^(d × d)"),
    (r"\mathrm{softmax}(Q K^\top / \sqrt{d_k})", "softmax(Q Kᵀ / √(d_k))"),
    (r"\|x\|_2 \le 1", "‖x‖₂ ≤ 1"),
    (r"V = \{0, 1\}^{n}", "V = {0, 1}ⁿ"),
])
def test_latex_reads_as_unicode(latex, shown):
    assert latex_text(latex) == shown


def test_only_formulas_change():
    assert plain_math("Costs $5 and $10, so $\\hat{p} \\approx 0.5$") == \
        "Costs $5 and $10, so p\u0302 ≈ 0.5"
