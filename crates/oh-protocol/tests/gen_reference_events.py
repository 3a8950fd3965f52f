"""Write fixtures/reference_events.json: events serialised by OpenHands' own event_to_dict.

Run with the project venv (openhands-ai 1.6.0):
    $OH_VENV/bin/python crates/oh-protocol/tests/gen_reference_events.py
The Rust test `reference_round_trip` decodes each event and re-encodes it; the text must match.
"""

import json
import pathlib

from openhands.events.action import CmdRunAction, FileEditAction, FileReadAction, FileWriteAction
from openhands.events.action.files import FileEditSource, FileReadSource
from openhands.events.event import EventSource
from openhands.events.observation import (
    CmdOutputMetadata,
    CmdOutputObservation,
    ErrorObservation,
    FileEditObservation,
    FileReadObservation,
    FileWriteObservation,
)
from openhands.events.serialization import event_from_dict, event_to_dict


def stamp(ev, id_=None, cause=None, source=None):
    if id_ is not None:
        ev._id = id_
    if cause is not None:
        ev._cause = cause
    if source is not None:
        ev._source = source
    return ev


actions = []
a = CmdRunAction(command='ls -la')
actions.append(a)
a = CmdRunAction(command='sleep 5', is_input=False, blocking=True)
a.set_hard_timeout(2.5)
actions.append(stamp(a, 12, source=EventSource.AGENT))
a = CmdRunAction(command='C-c', is_input=True, thought='stop it')
a.set_hard_timeout(120, blocking=False)
actions.append(stamp(a, 13, cause=4, source=EventSource.USER))
actions.append(FileReadAction(path='/w/a.py'))
actions.append(FileReadAction(path='/w/a.py', start=3, end=9, impl_source=FileReadSource.OH_ACI, view_range=[1, 20]))
actions.append(FileWriteAction(path='/w/n.txt', content='x\ny', start=1, end=3))
actions.append(FileEditAction(path='/w/a.py', command='str_replace', old_str='a', new_str='b', impl_source=FileEditSource.OH_ACI))
actions.append(FileEditAction(path='/w/a.py', command='insert', insert_line=3, new_str='z', impl_source=FileEditSource.OH_ACI))
actions.append(FileEditAction(path='/w/a.py', command='create', file_text='print(1)\n', impl_source=FileEditSource.OH_ACI))

observations = []
meta = CmdOutputMetadata(exit_code=0, pid=-1, username='root', hostname='sandbox', working_dir='/workspace',
                         py_interpreter_path='/usr/bin/python', suffix='\n[The command completed with exit code 0.]')
observations.append(stamp(CmdOutputObservation(content='hi', command='echo hi', metadata=meta), cause=7))
observations.append(CmdOutputObservation(content='', command='sleep 40', metadata=CmdOutputMetadata(
    suffix='\n[The command has no new output after 10 seconds.]', prefix='[Below is the output of the previous command.]\n')))
observations.append(stamp(CmdOutputObservation(content='é✓ "quoted" \t tab', command='printf', metadata=CmdOutputMetadata(exit_code=1, pid=4242), hidden=True), 3, 2, EventSource.AGENT))
observations.append(FileReadObservation(content='Hello World\n', path='/w/README.md'))
observations.append(stamp(FileReadObservation(content='ERROR:\nInvalid', path='rel.txt', impl_source=FileReadSource.OH_ACI), cause=9))
observations.append(FileWriteObservation(content='', path='/w/new.txt'))
observations.append(FileEditObservation(content='File created successfully at: /w/a.py', path='/w/a.py', prev_exist=False,
                                        old_content=None, new_content=None, impl_source=FileEditSource.OH_ACI,
                                        diff='--- /w/a.py\n+++ /w/a.py\n@@ -0,0 +1 @@\n+x'))
observations.append(FileEditObservation(content='ok', path='/w/b.py', prev_exist=False, old_content='a', new_content='b',
                                        impl_source=FileEditSource.OH_ACI, diff=''))
observations.append(ErrorObservation('ERROR_BINARY_FILE'))
observations.append(stamp(ErrorObservation('bad', error_id='AGENT_ERROR$BAD_ACTION'), cause=5))

out = {'actions': [], 'observations': []}
for ev in actions:
    d = event_to_dict(ev)
    assert event_to_dict(event_from_dict(json.loads(json.dumps(d)))) == d
    out['actions'].append(json.dumps(d, ensure_ascii=False, separators=(',', ':')))
for ev in observations:
    d = event_to_dict(ev)
    out['observations'].append(json.dumps(d, ensure_ascii=False, separators=(',', ':')))

path = pathlib.Path(__file__).parent / 'fixtures' / 'reference_events.json'
path.write_text(json.dumps(out, indent=1, ensure_ascii=False) + '\n')
print(f'wrote {len(out["actions"])} actions, {len(out["observations"])} observations to {path}')
