"""The streamed steps of a document, as JSON: every step's unit, index, id, piece, </s> mark, beam prefix, forced flag,
log-prob, alternatives and attention sum, greedy and beam 4, then the lines' translations. A refactor must not
change them: run it on the old and the new tree and compare the files (issue 30, benchmarks/RESULTS.md).

    for t in /tmp/before .; do PYTHONPATH=$t python benchmarks/same_stream.py > /tmp/stream-$(basename $t).json; done
"""
import sys, json
from nmt_desktop.core.config import DecodeConfig
from nmt_desktop.core.decoding.translator import Translator
from nmt_desktop.core.locations import resolve_model_path
tr = Translator.load(str(resolve_model_path("en-de")))
text = "The cat sits on the mat. It is very happy. The dog runs in the garden. We eat bread.\nI like tea."
out = []
for beam in (1, 4):
    doc = tr.stream_document(text, DecodeConfig(beam_size=beam, nbest=3 if beam > 1 else 1))
    for u, s in doc:
        out.append([beam, u, s.index, s.token_id, s.piece, s.is_eos, s.prefix_ids, s.forced, round(s.logprob, 6),
                    [(a.token_id, a.piece, round(a.prob, 6)) for a in s.alternatives],
                    None if s.cross_attention is None else round(float(s.cross_attention.sum()), 4)])
    out.append([t.text for t in doc.translations()])
print(json.dumps(out))
