"""Certificates for the TLS tests, made by the test with the `openssl` command: a test CA and a
server certificate it signs for the given addresses, and another CA that signed nothing here
(what a wrong CA file looks like). Used by test_tls_hub.py and tests/remote/."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes']


@dataclass
class Pki:
    ca: Path
    other_ca: Path
    cert: Path
    key: Path


def _openssl(cwd: Path, *args: str) -> None:
    done = subprocess.run(['openssl', *args], cwd=cwd, capture_output=True, text=True)
    assert done.returncode == 0, f'openssl {args}: {done.stderr}'


def make_pki(directory: Path, addresses: list[str]) -> Pki:
    """`ca.pem`, `other-ca.pem`, and `server.pem`/`server.key` for `addresses` (IPs or names)."""
    directory.mkdir(parents=True, exist_ok=True)
    for name in ('ca', 'other-ca'):
        _openssl(directory, 'req', '-x509', *KEY, '-days', '2', '-keyout', f'{name}.key', '-out', f'{name}.pem',
                 '-subj', f'/CN=oh-test-{name}', '-addext', 'basicConstraints=critical,CA:TRUE',
                 '-addext', 'keyUsage=critical,keyCertSign')
    _openssl(directory, 'req', '-new', *KEY, '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=oh-test-hub')
    names = ','.join(f"{'IP' if a.replace('.', '').isdigit() or ':' in a else 'DNS'}:{a}" for a in addresses)
    (directory / 'ext.cnf').write_text(f'subjectAltName={names}\nbasicConstraints=CA:FALSE\n')
    _openssl(directory, 'x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial',
             '-out', 'server.pem', '-days', '2', '-extfile', 'ext.cnf')
    return Pki(directory / 'ca.pem', directory / 'other-ca.pem', directory / 'server.pem', directory / 'server.key')
