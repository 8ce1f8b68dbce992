"""Reliability: any text in gives a translation or a clear InputTooLongError, never a crash.

Concern: users paste anything (the GUI editor, `translate TEXT`, stdin of the CLI). No input may
make `Translator.translate` / `translate_batch` / `stream` raise anything but `InputTooLongError`
(one-line message telling the user to split the sentence), and the CLI's stdin mode must print
exactly one output line per input line, whatever bytes come in.

Cases (hypothesis; the model is a small 1+1-layer one with max_positions 64, decoding greedily
with at most 5 target tokens and no attention, to keep thousands of examples fast):
  * batches of 1-8 texts built from: empty and whitespace-only strings, every ASCII control
    character, NUL, DEL, U+0085, U+2028/2029, RTL/LTR marks and overrides, zero-width characters,
    BOM, combining marks alone and stacked, emoji with ZWJ and skin tones, flags, noncharacters,
    private use, U+10FFFF, CJK and Arabic, sentence punctuation, words of the synthetic language,
    arbitrary Unicode text, and random bytes decoded with errors="replace"
    (NMT_FUZZ_EXAMPLES examples, default 2000);
  * single texts decoded with beam search 2 and attention (a tenth of that), checking the
    attention's shape and that its rows sum to 1;
  * 100,000-character inputs: splittable ones are split into sentences and translated,
    unsplittable ones are refused with InputTooLongError;
  * lone surrogates (a Python str can hold them, e.g. from surrogateescape file names);
  * the CLI: 5 child processes, each fed hundreds of random byte lines on stdin.

Longer run: `NMT_FUZZ_EXAMPLES=10000 OMP_NUM_THREADS=1 .venv/bin/python -m pytest
tests/reliability/test_text_fuzz.py -q` (the beam and CLI cases scale with it: 1/10 and 1/400).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from nmt_desktop.core.config import DecodeConfig
from nmt_desktop.core.decoding.document import InputTooLongError
from nmt_desktop.core.decoding.translator import Translator
from nmt_desktop.core.decoding.results import Translation
from tiny_models import SOURCE_WORDS

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = int(os.environ.get("NMT_FUZZ_EXAMPLES", "2000"))
FAST = DecodeConfig(max_len_a=0, max_len_b=5, attention=False, alternatives=0)
BEAM = DecodeConfig(beam_size=2, nbest=2, max_len_a=0, max_len_b=5, attention=True, alternatives=2)

SPECIAL = [
    "", " ", "   ", "\t", "\n", "\r\n", "\r", "\x0b", "\x0c", "\x00", "\x7f", "\x1b[31m", "\x85", "\u2028", "\u2029",
    *(chr(c) for c in range(32)),
    "\u200e", "\u200f", "\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2067", "\u2068", "\u2069",
    "\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00a0", "\u3000", "\u1680",
    "\u0301", "e\u0301", "\u0301" * 40, "Z\u0351\u0352\u0357\u0358\u0359\u035a" * 5, "\u0e47" * 10,
    "👩\u200d👩\u200d👧\u200d👦", "👍🏽", "🇩🇪🇫🇷", "🏳️\u200d🌈", "😀" * 30,
    "\ufffe", "\uffff", "\ufffd", "\ue000", "\U0010ffff", "\U000e0001", "\U0001d400",
    "中文。", "日本語！", "مرحبا بالعالم", "שלום", "Ελληνικά", "\u0915\u094d\u0937",
    ". ", "! ", "? ", "…", "。", ";", ":", ".", "...", "?!",
]
piece = st.one_of(
    st.sampled_from(SPECIAL),
    st.sampled_from(SOURCE_WORDS).map(lambda w: w + " "),
    st.text(max_size=12),
    st.binary(max_size=24).map(lambda b: b.decode("utf-8", errors="replace")),
)
texts = st.lists(piece, max_size=14).map("".join)
batches = st.lists(texts, min_size=1, max_size=8)


@pytest.fixture(scope="module")
def translator(small_pair) -> Translator:
    model, tokenizers = small_pair
    return Translator(model, tokenizers, name="small")


def check_too_long(exc: InputTooLongError) -> None:
    message = str(exc)
    assert "\n" not in message and "\r" not in message, message
    assert "split it into shorter sentences" in message and "at most 64" in message, message


def translate_each(translator: Translator, batch: list[str], cfg: DecodeConfig) -> None:
    """Every input alone: a Translation or InputTooLongError; never anything else."""
    for text in batch:
        try:
            result = translator.translate(text, cfg)
        except InputTooLongError as exc:
            check_too_long(exc)
            assert len(translator.source_ids(text)) > translator.config.max_positions
            continue
        check_translation(translator, text, result)


def check_translation(translator: Translator, text: str, result: Translation) -> None:
    assert isinstance(result, Translation) and isinstance(result.text, str)
    # (a long input that splits into a single sentence reports that stripped sentence as source)
    assert result.source == text or (result.source and result.source == text.strip()), (result.source, text)
    if not text.strip():
        assert result.text == "" and result.target_ids == []
    if not result.segments:
        assert len(result.target_ids) <= 5


@settings(max_examples=EXAMPLES, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(batch=batches)
def test_any_text_translates_or_is_refused_clearly(translator, batch):
    try:
        results = translator.translate_batch(batch, FAST, batch_size=4)
    except InputTooLongError as exc:
        check_too_long(exc)
        translate_each(translator, batch, FAST)  # what the CLI does: find the culprits one by one
        return
    assert len(results) == len(batch)
    for text, result in zip(batch, results):
        check_translation(translator, text, result)
    # the streaming path (the GUI's) decodes one sentence: it refuses what does not fit unsplit
    try:
        stream = translator.stream(batch[0], FAST)
    except InputTooLongError as exc:
        check_too_long(exc)
        assert len(translator.source_ids(batch[0])) > translator.config.max_positions
        return
    steps = list(stream)
    assert stream.result is not None and len(steps) <= 5


@settings(max_examples=max(50, EXAMPLES // 10), deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(text=texts)
def test_beam_search_with_attention_on_any_text(translator, text):
    try:
        result = translator.translate(text, BEAM)
    except InputTooLongError as exc:
        check_too_long(exc)
        return
    check_translation(translator, text, result)
    if result.segments or not text.strip():
        return
    cfg = translator.config
    for hyp in result.nbest:
        attn = hyp.attention
        assert attn.shape == (cfg.decoder_layers, cfg.n_heads, len(hyp.token_ids), len(result.source_ids))
        assert np.allclose(attn.sum(axis=-1), 1.0, atol=1e-4)


LONG = 100_000


@pytest.mark.parametrize("kind", ["sentences", "cjk-sentences", "one-sentence", "no-spaces", "whitespace",
                                  "emoji", "combining", "nul"])
def test_100k_character_input_is_split_or_refused(translator, kind):
    unit = {"sentences": "red cat runs. ", "cjk-sentences": "红色的猫在大房子里面跑来跑去。", "one-sentence": "red cat runs and ",
            "no-spaces": "x", "whitespace": " \t", "emoji": "😀", "combining": "e\u0301", "nul": "\x00"}[kind]
    text = (unit * (LONG // len(unit) + 1))[:LONG]
    assert len(text) == LONG
    try:
        result = translator.translate(text, FAST)
    except InputTooLongError as exc:
        check_too_long(exc)
        assert kind not in ("sentences", "cjk-sentences", "whitespace"), kind
        assert len(str(exc)) < 300  # the message quotes a shortened sentence, not 100,000 characters
        return
    assert kind in ("sentences", "cjk-sentences", "whitespace"), kind
    if kind == "whitespace":
        assert result.text == ""
    else:
        assert len(result.segments) > 1000 and all(len(s.source_ids) <= 64 for s in result.segments)


def test_lone_surrogates(translator):
    broken = b"caf\xe9 red cat \xff".decode("utf-8", errors="surrogateescape")
    for text in (broken, "\ud800", "red \udfff cat", "\udc80" * 10):
        try:
            result = translator.translate(text, FAST)
        except InputTooLongError as exc:
            check_too_long(exc)
            continue
        check_translation(translator, text, result)


# -- the CLI's stdin mode ------------------------------------------------------------------------

CLI_RUNS = max(5, EXAMPLES // 400)
line_bytes = st.one_of(
    st.binary(max_size=60),
    st.sampled_from([s.encode("utf-8", errors="surrogatepass") for s in SPECIAL]),
    st.sampled_from([b"red cat", b"\xff\xfe", b"\xc3\x28", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\r", b"\r\r",
                     b" ".join([b"red"] * 100)]),
)


@settings(max_examples=CLI_RUNS, deadline=None, database=None, phases=[Phase.generate],
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                 HealthCheck.function_scoped_fixture])
@given(lines=st.lists(line_bytes, min_size=50, max_size=300), final_newline=st.booleans())
def test_cli_stdin_keeps_one_output_line_per_input_line(small_model_dir, lines, final_newline):
    data = b"\n".join(lines) + (b"\n" if final_newline else b"")
    expected = data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)
    env = dict(os.environ, PYTHONIOENCODING="utf-8", OMP_NUM_THREADS="1")
    proc = subprocess.run([sys.executable, "-m", "nmt_desktop", "translate", "-m", str(small_model_dir),
                           "--beam", "1", "--max-len-a", "0", "--max-len-b", "5", "--no-attention",
                           "--batch-size", "32", "--threads", "1"],
                          input=data, capture_output=True, timeout=180, cwd=REPO, env=env)
    stderr = proc.stderr.decode("utf-8", errors="replace")
    assert proc.returncode in (0, 1), stderr[-2000:]
    assert "Traceback" not in stderr, stderr[-2000:]
    out = proc.stdout
    assert out.endswith(b"\n") or expected == 0
    out.decode("utf-8")  # valid UTF-8 whatever the model generated
    assert out.count(b"\n") == expected, (out.count(b"\n"), expected)
    errors = stderr.splitlines()
    assert (proc.returncode == 1) == bool(errors)
    for line in errors:
        assert line.startswith("nmt-desktop: error: input line ") and "at most 64" in line, line
