"""``recomp``: rebuilt through the configured chain, staged, resumed, published at once."""

import json
from dataclasses import replace

import pytest
from conftest import write_session, write_user_config
from fake_model import Error, Reply, covering_xml
from karni_historian.cli import main
from karni_historian.store import Store

WORDS = [
    "alpha",
    "beta",
    "gamma",
    "delta",
    "epsilon",
    "zeta",
    "eta",
    "theta",
    "iota",
    "kappa",
    "lambda",
    "mu",
]


def long_text(ordinal):
    return f"Message {ordinal}: " + " ".join(WORDS[(ordinal + i) % len(WORDS)] for i in range(600))


@pytest.fixture
def project(model_project):
    write_session(model_project, 1, 24, long_text)
    return model_project


def karni_historian(project, *args):
    return main(["--project", str(project), *args])


def published(project):
    with Store.open(project) as store:
        return [
            (s.compartment.start, s.compartment.end, s.compartment.title)
            for s in store.compartments("s")
        ]


def use_model(project, server):
    write_user_config(
        "[historian.claude_code]\n"
        f'model = {{model = "anthropic/claude-test", base_url = "{server.url}", '
        "context_window = 32000}\n"
    )


def prompt_range(request):
    import re

    text = "\n".join(m["content"] for m in request["body"]["messages"])
    return tuple(map(int, re.search(r"Messages (\d+)-(\d+):", text).groups()))


def test_an_interrupted_recomp_resumes_and_publishes_at_once(project, server, capsys):
    assert karni_historian(project, "wrapup", "2") == 0  # local/extractive
    before = published(project)
    assert before and before[-1][1] == 22
    use_model(project, server)
    server.queue(Reply(covering_xml), Error(400))
    assert karni_historian(project, "recomp") == 1
    err = capsys.readouterr().err
    assert "recomp failed" in err
    assert "staged, the published compartments are unchanged" in err
    assert "run `karni-historian recomp 1-22` again to resume" in err
    assert published(project) == before
    first = prompt_range(server.requests[0])
    assert first[0] == 1 and first[1] < 22  # more than one chunk
    with Store.open(project) as store:
        assert store.recomp_job("s") == (1, 22)
        assert store.staged("s")[-1].end == first[1]

    assert karni_historian(project, "recomp", "3-4") == 1
    assert "a recomp of messages 1-22 of session s is pending" in capsys.readouterr().err

    asked = len(server.requests)
    server.queue(*[Reply(covering_xml)] * 5)
    assert karni_historian(project, "recomp") == 0
    out = capsys.readouterr().out
    resumed = prompt_range(server.requests[asked])
    assert resumed[0] == first[1] + 1  # the staged chunk is not asked again
    after = published(project)
    assert after[0] == (1, first[1], f"Episode 1-{first[1]}")
    assert after[-1][1] == 22
    assert all(title.startswith("Episode ") for _, _, title in after)
    assert out == f"session s: messages 1-22 rebuilt; {len(after)} compartment(s) published\n"
    with Store.open(project) as store:
        assert store.recomp_job("s") is None and store.staged("s") == []
        assert store.last_run("s")["kind"] == "recomp"


def test_a_partial_range_snaps_to_compartment_boundaries(project, server, capsys):
    assert karni_historian(project, "wrapup", "2") == 0
    before = published(project)
    assert len(before) >= 2
    assert karni_historian(project, "render") == 0
    use_model(project, server)
    assert karni_historian(project, "render") == 0  # the new chain: a rebuild
    server.queue(*[Reply(covering_xml)] * 5)
    last_start, last_end, _ = before[-1]
    assert karni_historian(project, "recomp", f"{last_start + 1}-{last_end}") == 0
    after = published(project)
    assert after[:-1] == before[:-1]
    assert after[-1] == (last_start, last_end, f"Episode {last_start}-{last_end}")
    capsys.readouterr()
    assert karni_historian(project, "status", "--json") == 0
    pending = json.loads(capsys.readouterr().out)["rebuild"]["pending"]
    assert pending == "compartments of the rebuilt block were rebuilt"


def test_recomp_errors_are_one_line(project, capsys):
    assert karni_historian(project, "recomp") == 1
    assert capsys.readouterr().err == (
        "karni-historian: session s has no compartment to rebuild; "
        "run `karni-historian wrapup` first\n"
    )
    assert karni_historian(project, "recomp", "5-2") == 2
    assert "the range must be START-END" in capsys.readouterr().err
    assert karni_historian(project, "wrapup", "2") == 0
    capsys.readouterr()
    assert karni_historian(project, "recomp", "23-24") == 1
    assert "lie after the last compartment (message 22)" in capsys.readouterr().err


def test_staged_compartments_read_back_as_they_were_staged(project):
    # Each field has a column: text holds a NUL and every other character exactly.
    from karni_historian.model import Compartment

    unusual = [
        Compartment(
            1, 4, "Ünïcödé 🙂 title", p1='a\nb\t"c"', importance=99, start_date="2026-03-02"
        ),
        Compartment(5, 9, "an escaped \\ud800 and a NUL \x00", p2="x", legacy=True, content="b"),
        Compartment(10, 12, "", p1="\x00", p4="\\u0000 \x00", importance=150, end_date=None),
    ]
    with Store.open(project, create=True) as store:
        store.ensure_session("s", "claude-code")
        store.start_recomp("s", 1, 12)
        store.stage("s", unusual[:1])
        store.stage("s", unusual[1:])
        assert store.staged("s") == unusual
        assert store.last_staged_end("s") == 12
        assert store.staged_span("s") == (3, 1, 10)
        store.stage("s", [replace(unusual[2], end=13, title="again")])  # a start staged twice
        assert store.staged("s") == [*unusual[:2], replace(unusual[2], end=13, title="again")]
        assert store.last_staged_end("s") == 13
