"""`nmt-desktop translate --memory FILE --learn` through the real command line, in a child process: each line
translated with the memory as it stands, printed, then its reference confirmed into the memory."""

from __future__ import annotations

import copy
import dataclasses
import itertools
import json

import pytest
import torch

from cli_runner import run_cli
from nmt_desktop.core.adaptation.online_learning import OnlineLearning
from nmt_desktop.core.memory import Pair, TranslationMemory


@pytest.fixture(scope="module")
def model_dir(tiny_trained, tmp_path_factory):
    """The tiny model with languages named (a memory is looked up by the model's pair)."""
    from nmt_desktop.core.formats.model_folder import save_model

    model, tokenizers = tiny_trained
    named = copy.copy(model)
    named.config = dataclasses.replace(model.config, src_lang="en", tgt_lang="xx")
    return save_model(tmp_path_factory.mktemp("models") / "tiny-en-xx", named, tokenizers)


def test_learn_confirms_each_reference_and_the_next_line_adapts_to_it(model_dir, tmp_path):
    memory = tmp_path / "memory.sqlite"
    lines = "red cat runs\trennt katze rot\nblue dog sleeps\tblau hund schlaeft\nred cat runs\trennt katze rot\n"
    proc = run_cli("translate", "-m", str(model_dir), "--memory", str(memory), "--learn", stdin=lines)
    assert proc.returncode == 0, proc.stderr
    first, second, third = proc.stdout.splitlines()
    assert first != "rennt katze rot"  # the memory was empty: the model's own translation
    assert third == "rennt katze rot"  # confirmed after line 1: the same source now gives the post-edit
    with TranslationMemory(memory, create=False) as tm:
        entries = sorted((e.source, e.target, e.origin, e.pair) for e in tm.entries())
    assert entries == [("blue dog sleeps", "blau hund schlaeft", "confirmed", Pair.of("en", "xx")),
                       ("red cat runs", "rennt katze rot", "confirmed", Pair.of("en", "xx"))]


def test_a_line_without_a_reference_is_named_and_the_rest_go_on(model_dir, tmp_path):
    proc = run_cli("translate", "-m", str(model_dir), "--memory", str(tmp_path / "m.sqlite"), "--learn",
                   stdin="red cat runs\nblue dog sleeps\tblau hund schlaeft\n")
    assert proc.returncode == 1
    assert proc.stderr.strip() == ("nmt-desktop: error: input line 1: --learn needs SOURCE<TAB>REFERENCE, "
                                   "and this line has no tab")
    assert proc.stdout.splitlines()[0] == ""


def test_a_memory_that_does_not_open_is_one_sentence(model_dir, tmp_path):
    proc = run_cli("translate", "-m", str(model_dir), "--memory", str(tmp_path / "none.sqlite"), "red cat")
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    assert proc.stderr.strip() == f"nmt-desktop: error: {tmp_path / 'none.sqlite'}: no translation memory there"
    proc = run_cli("translate", "-m", str(model_dir), "--learn", "red cat")
    assert proc.returncode != 0 and "--learn needs --memory FILE" in proc.stderr and "Traceback" not in proc.stderr


def test_what_the_model_learned_is_kept_beside_the_memory_and_used_by_later_runs(model_dir, tmp_path):
    """Online learning (core/adaptation/online_learning.py): a later `translate --memory` reads the learned
    weights kept beside the memory (the same memory without them translates otherwise; a line with no match in
    the memory gets the parent's weights, bit for bit), and --learn over A, B,
    then over C, learns what one run over A, B, C learns, bit for bit (on one thread: a float sum split
    over a load-dependent number of threads rounds differently)."""
    import shutil

    lines = ["red cat runs\trennt katze rot", "blue dog sleeps\tblau hund schlaeft",
             "the small red cat runs\tder kleine rennt katze rot"]
    one, two, bare = tmp_path / "one.sqlite", tmp_path / "two.sqlite", tmp_path / "bare.sqlite"
    learning = ("translate", "-m", str(model_dir), "--threads", "1", "--learn", "--learn-weights", "--memory")
    assert run_cli(*learning, str(one), stdin="\n".join(lines) + "\n").returncode == 0
    assert run_cli(*learning, str(two), stdin="\n".join(lines[:2]) + "\n").returncode == 0
    kept = sorted(tmp_path.glob("two.sqlite.learned-*.safetensors"))
    assert len(kept) == 1
    shutil.copy(two, bare)  # the same memory, nothing learned beside it
    later, plain = (run_cli("translate", "-m", str(model_dir), "--threads", "1", "--memory", str(m), "--json",
                            "--no-attention", "the small red cat runs") for m in (two, bare))
    assert later.returncode == 0 and plain.returncode == 0, later.stderr + plain.stderr
    scores = [json.loads(p.stdout)["nbest"][0]["token_logprobs"] for p in (later, plain)]
    assert scores[0] != scores[1]
    with TranslationMemory(two, create=False) as tm:  # a line unlike the memory: the gate gives the parent
        assert tm.search("sun moon water", Pair.of("en", "xx"), min_score=30.0) == []
    unlike = [run_cli("translate", "-m", str(model_dir), "--threads", "1", *memory, "--json", "--no-attention",
                      "sun moon water") for memory in (("--memory", str(two)), ())]
    assert unlike[0].returncode == 0 and unlike[1].returncode == 0
    assert json.loads(unlike[0].stdout)["nbest"] == json.loads(unlike[1].stdout)["nbest"]  # bit for bit
    assert run_cli(*learning, str(two), stdin=lines[2] + "\n").returncode == 0
    from safetensors.torch import load_file, safe_open

    files = [kept[0], tmp_path / kept[0].name.replace("two.", "one.")]
    resumed, whole = (load_file(str(f)) for f in files)
    assert resumed.keys() == whole.keys() and all(torch.equal(resumed[k], whole[k]) for k in whole)
    metadata = []
    for f in files:
        with safe_open(str(f), framework="pt") as opened:
            metadata.append(opened.metadata())
    steps = 3 * OnlineLearning().steps  # three confirmations, `steps` Adam steps each
    assert metadata[0] == metadata[1] == {"learned": "3", "steps": str(steps)}


def test_learn_learns_the_weights_by_default(model_dir, tmp_path):
    proc = run_cli("translate", "-m", str(model_dir), "--memory", str(tmp_path / "m.sqlite"), "--learn",
                   stdin="red cat runs\trennt katze rot\n")
    assert proc.returncode == 0, proc.stderr
    assert len(list(tmp_path.glob("m.sqlite.learned-*.safetensors"))) == 1  # what it learned, beside the memory
    proc = run_cli("translate", "-m", str(model_dir), "--memory", str(tmp_path / "m.sqlite"), "--learn-weights", "red")
    assert proc.returncode != 0 and "--learn-weights needs --learn" in proc.stderr and "Traceback" not in proc.stderr


def test_no_learn_weights_keeps_the_weights_and_learn_weights_learns(model_dir, tmp_path):
    """--no-learn-weights confirms into the memory only; --learn-weights (accepted whatever the default) learns."""
    line = "red cat runs\trennt katze rot\n"
    for flag, memory in (("--no-learn-weights", "off.sqlite"), ("--learn-weights", "on.sqlite")):
        proc = run_cli("translate", "-m", str(model_dir), "--threads", "1", "--memory", str(tmp_path / memory),
                       "--learn", flag, stdin=line)
        assert proc.returncode == 0, proc.stderr
    assert not list(tmp_path.glob("off.sqlite.learned-*"))  # nothing learned beside the memory
    assert len(list(tmp_path.glob("on.sqlite.learned-*.safetensors"))) == 1


def test_a_short_line_like_none_of_the_memorys_segments_gets_the_parents_weights(model_dir, tmp_path):
    """The gate (OnlineLearner.wants_learned): with 10 or more segments in the memory, a line shorter than its
    shortest tenth is translated with the parent's weights even where it matches, bit for bit; a line as long as
    the segments, with a match, with the learned ones."""
    # 12 segments of 7 words: the shortest tenth has 7
    lines = [f"red cat runs blue dog sleeps {w}\trennt katze rot {w}" for w in "abcdefghijkl"]
    memory = tmp_path / "m.sqlite"
    assert run_cli("translate", "-m", str(model_dir), "--threads", "1", "--memory", str(memory), "--learn",
                   stdin="\n".join(lines) + "\n").returncode == 0
    assert len(list(tmp_path.glob("m.sqlite.learned-*.safetensors"))) == 1
    plain_memory = tmp_path / "plain.sqlite"
    import shutil

    shutil.copy(memory, plain_memory)  # the same memory, nothing learned beside it
    runs = {}
    long_line = "the small red cat runs blue dog"  # as long as the segments, a match, none of them
    for text in ("red cat runs blue", long_line):
        runs[text] = [json.loads(run_cli("translate", "-m", str(model_dir), "--threads", "1", "--memory", str(m),
                                         "--json", "--no-attention", text).stdout)["nbest"] for m in (memory, plain_memory)]
    with TranslationMemory(memory, create=False) as tm:
        assert tm.search("red cat runs blue", Pair.of("en", "xx"), min_score=30.0)  # a match, but 4 words
    assert runs["red cat runs blue"][0] == runs["red cat runs blue"][1]  # the parent's weights, bit for bit
    assert runs[long_line][0] != runs[long_line][1]  # the learned weights


def test_a_learning_run_keeps_the_learned_models_states_and_the_next_run_decodes_none_again(model_dir, tmp_path):
    """After `--learn` learned, the memory's segments are decoded once under the weights it saved and kept beside
    the memory (kept_states.py), so a later `translate --memory` of lines matching them writes no new states."""
    lines = ["red cat runs\trennt katze rot", "blue dog sleeps\tblau hund schlaeft",
             "the small red cat runs\tder kleine rennt katze rot"]
    memory = tmp_path / "m.sqlite"
    assert run_cli("translate", "-m", str(model_dir), "--threads", "1", "--memory", str(memory), "--learn",
                   stdin="\n".join(lines) + "\n").returncode == 0
    shards = sorted(tmp_path.glob("m.sqlite.states-*/*.safetensors"))
    assert shards  # the learned model's states, kept when the run ended
    later = run_cli("translate", "-m", str(model_dir), "--threads", "1", "--memory", str(memory),
                    "red cat runs blue", "the small red cat runs", "blue dog sleeps")
    assert later.returncode == 0, later.stderr
    assert sorted(tmp_path.glob("m.sqlite.states-*/*.safetensors")) == shards  # nothing decoded and kept anew


def test_a_second_learning_run_replaces_the_first_ones_kept_states(model_dir, tmp_path):
    """Each learning run keeps the states of the weights it ends with; the next run's replace them (the folder of
    the weights it started from is deleted), so runs do not pile folders up beside the memory."""
    memory = tmp_path / "m.sqlite"
    for line in ("red cat runs\trennt katze rot\n", "blue dog sleeps\tblau hund schlaeft\n"):
        assert run_cli("translate", "-m", str(model_dir), "--threads", "1", "--memory", str(memory), "--learn",
                       stdin=line).returncode == 0
        folders = [f for f in tmp_path.glob("m.sqlite.states-*") if any(f.iterdir())]
        assert len(folders) == 1, folders  # the parent's kept nothing (its weights changed at once): the last run's
    first = folders[0]
    assert run_cli("translate", "-m", str(model_dir), "--threads", "1", "--memory", str(memory), "--learn",
                   stdin="the small red cat runs\tder kleine rennt katze rot\n").returncode == 0
    assert not first.exists()


def test_a_learning_run_keeps_the_states_of_the_segments_it_used_not_of_the_whole_memory(model_dir, tmp_path):
    """A memory imported from a large TMX would otherwise have every segment force-decoded when a one-line
    `--learn` run ends: only the segments the run matched or confirmed are decoded and kept; a later run decodes
    (and keeps) the others it matches."""
    from safetensors import safe_open

    from nmt_desktop.core.memory import Entry

    memory, pair = tmp_path / "m.sqlite", Pair.of("en", "xx")
    words = ["sun", "moon", "water", "tree", "house", "bird", "green", "small", "big", "sees"]
    with TranslationMemory(memory) as tm:  # 30 segments no line below matches
        tm.add([Entry(" ".join(four), " ".join(reversed(four)), pair, origin="file")
                for four in itertools.islice(itertools.combinations(words, 4), 30)])
        total = len(list(tm.entries(pair)))
    assert total == 30
    assert run_cli("translate", "-m", str(model_dir), "--threads", "1", "--memory", str(memory), "--learn",
                   stdin="red cat runs\trennt katze rot\n").returncode == 0

    def kept() -> set[str]:
        names = set()
        for shard in tmp_path.glob("m.sqlite.states-*/*.safetensors"):
            with safe_open(str(shard), framework="pt") as opened:
                names.update(opened.keys())
        return names

    with TranslationMemory(memory, create=False) as tm:
        confirmed = next(e for e in tm.entries(pair) if e.source == "red cat runs")
    assert {n.split("-")[0] for n in kept()} == {str(confirmed.id)}  # the one segment the run used
    later = run_cli("translate", "-m", str(model_dir), "--threads", "1", "--memory", str(memory),
                    "sun tree house bird")
    assert later.returncode == 0, later.stderr
    assert len(kept()) > 1  # a segment that line matched: decoded then, and kept for the next run


def test_a_short_exact_repeat_takes_the_learned_weights_and_their_kept_states(model_dir, tmp_path):
    """A line the memory holds exactly gets the memory's translation under either weights (the repeat rule), so
    the gate gives it the learned ones whatever its length: their states were kept when the learning run ended,
    and the parent's would be decoded again (the first `translate --memory` after learning paid for it)."""
    lines = [f"red cat runs blue dog sleeps {w}\trennt katze rot {w}" for w in "abcdefghijk"]
    lines.append("blue dog\tblau hund")  # shorter than the shortest tenth (7 words)
    memory = tmp_path / "m.sqlite"
    assert run_cli("translate", "-m", str(model_dir), "--threads", "1", "--memory", str(memory), "--learn",
                   stdin="\n".join(lines) + "\n").returncode == 0
    shards = sorted(tmp_path.glob("m.sqlite.states-*/*.safetensors"))
    later = run_cli("translate", "-m", str(model_dir), "--threads", "1", "--memory", str(memory), "blue dog")
    assert later.returncode == 0, later.stderr
    assert later.stdout.strip() == "blau hund"
    assert sorted(tmp_path.glob("m.sqlite.states-*/*.safetensors")) == shards  # nothing decoded and kept anew
