// The production overlays' public host is set in one place, PUBLIC_BASE_URL in overlays/prod: kustomize's
// replacements copy its host into the Ingress (rule and TLS entry) and the mailer's sender. Changing that
// one line in a copy of deploy/k8s changes every use, in prod and prod-ha, and leaves no trace of the old host.
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dataOf, find, kustomize, ROOT, type K8sObject } from './deploy-files';

const OVERLAY = 'deploy/k8s/overlays/prod/kustomization.yaml';
const THE_LINE = /^(\s*- PUBLIC_BASE_URL=https:\/\/)([^\s/]+)$/m;

function usesOfTheHost(objects: readonly K8sObject[]) {
  const ingress = find(objects, 'Ingress', 'vanish');
  return {
    publicBaseUrl: dataOf(find(objects, 'ConfigMap', 'vanish-public')).PUBLIC_BASE_URL,
    ingressRule: ingress.spec.rules[0].host as string,
    ingressTls: ingress.spec.tls[0].hosts[0] as string,
    mailFrom: dataOf(find(objects, 'ConfigMap', 'mailer-config')).MAIL_FROM,
  };
}

describe('the public host of the production overlays', () => {
  const copies: string[] = [];
  afterAll(() => { for (const dir of copies) rmSync(dir, { recursive: true, force: true }); });

  it('when the overlay is read, then the host is written once, on the PUBLIC_BASE_URL line', () => {
    const text = readFileSync(join(ROOT, OVERLAY), 'utf8');
    const host = THE_LINE.exec(text)?.[2];
    expect(host).toBe('vanish.example.com');
    const uncommented = text.split('\n').filter((line) => !line.trim().startsWith('#')).join('\n');
    expect(uncommented.split(host!).length - 1).toBe(1);
  });

  it.each(['prod', 'prod-ha'] as const)('when the %s overlay is built as committed, then every use names the host of PUBLIC_BASE_URL', (overlay) => {
    expect(usesOfTheHost(kustomize(overlay))).toEqual({
      publicBaseUrl: 'https://vanish.example.com', ingressRule: 'vanish.example.com', ingressTls: 'vanish.example.com', mailFrom: 'notes@vanish.example.com',
    });
  });

  it.each(['prod', 'prod-ha'] as const)('when only the PUBLIC_BASE_URL line is changed, then the %s overlay uses the new host everywhere and the old one nowhere', (overlay) => {
    const copy = mkdtempSync(join(tmpdir(), 'vanish-public-host-'));
    copies.push(copy);
    cpSync(join(ROOT, 'deploy/k8s'), join(copy, 'deploy/k8s'), { recursive: true });
    const file = join(copy, OVERLAY);
    const before = readFileSync(file, 'utf8');
    const after = before.replace(THE_LINE, '$1notes.acme.test');
    expect(after).not.toBe(before);
    writeFileSync(file, after);
    const objects = kustomize(overlay, join(copy, 'deploy/k8s/overlays', overlay));
    expect(usesOfTheHost(objects)).toEqual({
      publicBaseUrl: 'https://notes.acme.test', ingressRule: 'notes.acme.test', ingressTls: 'notes.acme.test', mailFrom: 'notes@notes.acme.test',
    });
    expect(JSON.stringify(objects)).not.toContain('vanish.example.com');
  });
});
