import { parseStrictJson } from './strict-json';

describe('parseStrictJson', () => {
  it('when a key appears twice in one object, at any depth or escaped differently, then it is refused, naming the key and not the text', () => {
    expect(() => parseStrictJson('{"category":"notes","category":"notes/access"}')).toThrow(/^duplicate key "category"$/);
    expect(() => parseStrictJson('{"a":{"b":1,"b":2}}')).toThrow(/duplicate key "b"/);
    expect(() => parseStrictJson('[{"x":1},{"y":[{"z":1,"z":1}]}]')).toThrow(/duplicate key "z"/);
    expect(() => parseStrictJson('{"a":1,"\\u0061":2}')).toThrow(/duplicate key "a"/);
    expect(() => parseStrictJson('{"a" : 1 ,\n "a"\t: 2}')).toThrow(/duplicate key "a"/);
  });

  it('when keys repeat only across objects, or a value looks like a key, then it parses as JSON.parse does', () => {
    const text = '{"a":{"k":1},"b":{"k":"x\\":\\"y"},"c":["k","k"],"d":"a:","e":"\\\\","f":{"e":1}}';
    expect(parseStrictJson(text)).toEqual(JSON.parse(text));
  });

  it('when the text is not JSON, then it throws as JSON.parse does', () => {
    expect(() => parseStrictJson('{"a":')).toThrow(SyntaxError);
  });
});
