import { parseTakedownTarget } from './takedown';

const UUID = '3f0c8a52-1b7e-4c1d-9a3e-5b2f6c7d8e9f';

describe('parseTakedownTarget', () => {
  it.each([
    [UUID],
    [`https://notes.example.com/${UUID}`],
    [`http://localhost:8080/${UUID}/`],
    [`https://notes.example.com/${UUID}?utm=x#frag`],
    [`  ${UUID.toUpperCase()}\n`],
  ])('when given %p, then it finds the uuid', (input) => {
    expect(parseTakedownTarget(input)).toBe(UUID);
  });

  it.each([[''], ['not a link'], ['https://notes.example.com/'], [`https://x/${UUID}/extra`], ['../../etc/passwd'], [`${UUID}' OR 1=1`]])(
    'when given %p, then it refuses it',
    (input) => {
      expect(parseTakedownTarget(input)).toBeNull();
    },
  );
});
