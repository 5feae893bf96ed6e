"""Every usage error is one line naming what was wrong (never argparse's usage block first)."""

from __future__ import annotations

import pytest

from koikoi.client.cli import main


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["history", "--opponent", "nonsense"], "'nonsense' is not a key fingerprint"),
        (["history", "--since", "yesterday"], "--since"),
        (["audit"], "the following arguments are required: FILE"),
        (["ratings"], "the following arguments are required"),
        (["practice", "--rounds", "7"], "invalid choice: 7"),
        (["nosuchcommand"], "invalid choice: 'nosuchcommand'"),
    ],
)
def test_a_usage_error_is_one_line(argv: list[str], words: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        main(argv)
    err = capsys.readouterr().err
    assert e.value.code == 2
    assert err.count("\n") == 1 and words in err and err.startswith("koikoi"), err
