import { parseJsonLines, parseStrictJson } from './strict-json';

describe('strict JSON', () => {
  it('when a key appears twice in one object, at any depth or escaped differently, then it is refused', () => {
    expect(() => parseStrictJson('{"category":"notes","category":"notes/access"}')).toThrow(/duplicate key "category"/);
    expect(() => parseStrictJson('{"a":{"b":1,"b":2}}')).toThrow(/duplicate key "b"/);
    expect(() => parseStrictJson('[{"x":1},{"y":[{"z":1,"z":1}]}]')).toThrow(/duplicate key "z"/);
    expect(() => parseStrictJson('{"a":1,"\\u0061":2}')).toThrow(/duplicate key "a"/);
  });

  it('when keys repeat only across objects, or a value looks like a key, then it parses as JSON.parse does', () => {
    const text = '{"a":{"k":1},"b":{"k":"x\\":\\"y"},"c":["k","k"],"d":"a:"}';
    expect(parseStrictJson(text)).toEqual(JSON.parse(text));
  });

  it('when a line is bare text, broken, or not an object, then parseJsonLines names it', () => {
    expect(parseJsonLines('{"a":1}\n{"b":2}\n')).toEqual([{ a: 1 }, { b: 2 }]);
    expect(() => parseJsonLines('{"a":1}\nConnection Error: Error: read ECONNRESET\n')).toThrow(/line 2 .*ECONNRESET/);
    expect(() => parseJsonLines('{"a":1}\n\n')).toThrow(/line 2/);
    expect(() => parseJsonLines('{"a":\n')).toThrow(/line 1/);
    expect(() => parseJsonLines('42\n')).toThrow(/not an object/);
  });
});
