"""A V1 edit's whole-file `old_content`/`new_content` through the shipped path (the Python tool,
the socket, the headless executor), on both sides of the reply limit (4,000,000 bytes).

Under it both texts arrive whole; over it both are null (a reply that big would drop the
connection), and the edit itself is done. The executor leaves them out before copying them
(`ExecutorConfig::v1_contents_limit`, set by the headless binary to the transport's reply limit),
the transport would drop them anyway: this pins that both agree, so the observation is the same
as when only the transport dropped them (an executor limit set lower would lose contents that fit).
"""

from __future__ import annotations

from pathlib import Path

LINE = 'x' * 99 + '\n'


def test_edit_contents_whole_under_the_reply_limit_and_null_over_it(tmp_path: Path) -> None:
    from openhands.tools.file_editor.definition import FileEditorAction
    from openhands_vscode_runtime.v1.connection import acquire, close_all
    from openhands_vscode_runtime.v1.tools import VsCodeFileEditorExecutor

    ws = tmp_path / 'ws'
    ws.mkdir()
    try:
        editor = VsCodeFileEditorExecutor(acquire('contents-limit', str(ws)))
        # 1.9 MB: before + after 3.8 MB, the reply under 4,000,000 bytes. 2.1 MB: 4.2 MB, over.
        for lines, whole in ((19_000, True), (21_000, False)):
            half = LINE * (lines // 2)
            before, after = f'{half}OLD\n{half}', f'{half}NEW\n{half}'
            path = ws / f'f{lines}.txt'
            path.write_text(before)
            obs = editor(FileEditorAction(command='str_replace', path=str(path), old_str='OLD', new_str='NEW'))
            assert not obs.is_error, obs.text[:300]
            assert path.read_text() == after
            lens = (obs.old_content and len(obs.old_content), obs.new_content and len(obs.new_content))
            if whole:
                assert lens == (len(before), len(after)), lens
                assert obs.old_content == before and obs.new_content == after
            else:
                assert lens == (None, None), lens
            assert f'The file {path} has been edited.' in obs.text, obs.text[:300]
    finally:
        close_all()
