import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Test certificates made with the openssl CLI (EC P-256 keys, valid one day). */
export interface CertPair {
  cert: string;
  key: string;
}

function openssl(args: string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: 'pipe' });
}

export function makeCa(dir: string, name: string): CertPair {
  const pair = { cert: join(dir, `${name}.pem`), key: join(dir, `${name}.key`) };
  openssl(
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      pair.key,
      '-out',
      pair.cert,
      '-days',
      '1',
      '-subj',
      `/CN=${name}`,
    ],
    dir,
  );
  return pair;
}

/** A leaf certificate signed by `ca` with common name `cn` and the given subjectAltName entries. */
export function makeLeaf(
  dir: string,
  ca: CertPair,
  name: string,
  cn: string,
  san: string,
  usage: 'serverAuth' | 'clientAuth',
): CertPair {
  const pair = { cert: join(dir, `${name}.pem`), key: join(dir, `${name}.key`) };
  const csr = join(dir, `${name}.csr`);
  const ext = join(dir, `${name}.ext`);
  writeFileSync(ext, `subjectAltName=${san}\nextendedKeyUsage=${usage}\n`);
  openssl(
    [
      'req',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      pair.key,
      '-out',
      csr,
      '-subj',
      `/CN=${cn}`,
    ],
    dir,
  );
  openssl(
    [
      'x509',
      '-req',
      '-in',
      csr,
      '-CA',
      ca.cert,
      '-CAkey',
      ca.key,
      '-CAcreateserial',
      '-out',
      pair.cert,
      '-days',
      '1',
      '-extfile',
      ext,
    ],
    dir,
  );
  return pair;
}
