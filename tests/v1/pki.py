"""Certificates for the TLS tests, made by the test with the `openssl` command: a test CA and a
server certificate it signs for the given addresses, and another CA (what a wrong CA file looks
like) with a certificate it signs for the same addresses (what a middle box that terminates TLS
presents). Used by test_tls_hub.py and tests/remote/."""

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
    other_cert: Path
    other_key: Path


def _openssl(cwd: Path, *args: str) -> None:
    done = subprocess.run(['openssl', *args], cwd=cwd, capture_output=True, text=True)
    assert done.returncode == 0, f'openssl {args}: {done.stderr}'


def make_pki(directory: Path, addresses: list[str]) -> Pki:
    """`ca.pem`, `other-ca.pem`, `server.pem`/`server.key` signed by the first and
    `other.pem`/`other.key` by the second, both for `addresses` (IPs or names)."""
    directory.mkdir(parents=True, exist_ok=True)
    for name in ('ca', 'other-ca'):
        _openssl(directory, 'req', '-x509', *KEY, '-days', '2', '-keyout', f'{name}.key', '-out', f'{name}.pem',
                 '-subj', f'/CN=oh-test-{name}', '-addext', 'basicConstraints=critical,CA:TRUE',
                 '-addext', 'keyUsage=critical,keyCertSign')
    names = ','.join(f"{'IP' if a.replace('.', '').isdigit() or ':' in a else 'DNS'}:{a}" for a in addresses)
    (directory / 'ext.cnf').write_text(f'subjectAltName={names}\nbasicConstraints=CA:FALSE\n')
    for name, ca in (('server', 'ca'), ('other', 'other-ca')):
        _openssl(directory, 'req', '-new', *KEY, '-keyout', f'{name}.key', '-out', f'{name}.csr',
                 '-subj', f'/CN=oh-test-{name}')
        _openssl(directory, 'x509', '-req', '-in', f'{name}.csr', '-CA', f'{ca}.pem', '-CAkey', f'{ca}.key',
                 '-CAcreateserial', '-out', f'{name}.pem', '-days', '2', '-extfile', 'ext.cnf')
    d = directory
    return Pki(d / 'ca.pem', d / 'other-ca.pem', d / 'server.pem', d / 'server.key', d / 'other.pem', d / 'other.key')
