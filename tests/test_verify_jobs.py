"""``verify --jobs N``: claims checked side by side in the executors' local
process pool, with verdicts.json the same bytes as ``--jobs 1``; a bad N is one line, exit 2."""

import pytest

from approxtheory.errors import ConfigError
from approxtheory.verify import _groups, check_jobs, max_jobs, run_verify, select_claims


@pytest.mark.parametrize("bad", [0, -1, True, 1.5, "2", max_jobs() + 1])
def test_a_bad_job_count_is_refused_naming_the_range(bad):
    with pytest.raises(ConfigError, match=rf"from 1 to {max_jobs()}"):
        check_jobs(bad)
    assert check_jobs(1) == 1 and check_jobs(max_jobs()) == max_jobs()


@pytest.mark.parametrize("bad", ["0", "x", str(max_jobs() + 1)])
def test_the_cli_refuses_a_bad_job_count_in_one_line(bad, tmp_path, capsys):
    from approxtheory.cli import main

    try:
        rc = main(["verify", "--jobs", bad, "--out", str(tmp_path)])
    except SystemExit as e:
        rc = e.code
    assert rc == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "--jobs" in err
    assert not (tmp_path / "verdicts.json").exists()


def test_claims_of_one_check_go_to_one_worker_longest_first():
    sel = select_claims(["HC-L8", "HC-L9", "HC-P4", "HC-P6"])
    groups = _groups(sel, {"HC-P6": 5.0, "HC-L9": 1.0, "HC-P4": 1.0})
    assert [[sel[i].id for i in g] for g in groups] == [["HC-P6"], ["HC-L9", "HC-P4"], ["HC-L8"]]


def _data(folder):
    return {f.name: f.read_bytes() for f in sorted((folder / "data").iterdir())}


def test_jobs_2_writes_the_same_bytes_as_jobs_1(tmp_path):
    """Claims sharing one check (HC-T2b and HC-TR3, ID-B4.6 and ID-L4.1) and, with mutants,
    HC-P6. (Checks with a certified bracket are left out: its branch-and-bound is cut by wall
    time, CERTIFY_SECONDS, so its cells differ between any two runs on a loaded machine.)"""
    ids = ["HC-L8", "HC-T2b", "HC-TR3", "ID-B4.6", "ID-L4.1"]
    for jobs in (1, 2):
        rc = run_verify(only=ids, out=tmp_path / str(jobs), progress=False, jobs=jobs)
        assert rc == 0
    one = (tmp_path / "1" / "verdicts.json").read_bytes()
    assert one == (tmp_path / "2" / "verdicts.json").read_bytes()
    assert _data(tmp_path / "1") == _data(tmp_path / "2")
    ids = ["HC-P6", "HC-L8"]
    for jobs in (1, 2):
        rc = run_verify(
            only=ids, out=tmp_path / f"m{jobs}", progress=False, mutants=True, jobs=jobs
        )
        assert rc == 0
    assert (tmp_path / "m1" / "verdicts.json").read_bytes() == (
        tmp_path / "m2" / "verdicts.json"
    ).read_bytes()


def test_every_verify_option_has_help():
    from approxtheory.cli import build_parser

    p = build_parser()
    sub = next(a for a in p._actions if a.__class__.__name__ == "_SubParsersAction")
    verify = sub.choices["verify"]
    missing = [
        a.option_strings for a in verify._actions if a.option_strings and not (a.help or "").strip()
    ]
    assert not missing, missing
