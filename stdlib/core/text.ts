/**
 * Core text natives: case, trimming, splitting, literal replacement and prefix/suffix tests.
 */
import type { PluginApi } from '../../plugins/sdk.js';
import { checkLength, expectText } from './args.js';

/** Registers lower, upper, trim, split, replace, starts_with and ends_with. */
export function registerText(rvm: PluginApi): void {
  rvm.native('lower', (_ctx, s) => expectText('lower', 's', s).toLowerCase(), {
    params: [{ name: 's', type: 'text' }],
    returns: 'text',
    doc: 'Returns the text in lower case (Unicode rules, locale-independent).',
  });

  rvm.native('upper', (_ctx, s) => expectText('upper', 's', s).toUpperCase(), {
    params: [{ name: 's', type: 'text' }],
    returns: 'text',
    doc: 'Returns the text in upper case (Unicode rules, locale-independent).',
  });

  rvm.native('trim', (_ctx, s) => expectText('trim', 's', s).trim(), {
    params: [{ name: 's', type: 'text' }],
    returns: 'text',
    doc: 'Returns the text without leading and trailing white space (spaces, tabs, line breaks, Unicode spaces).',
  });

  rvm.native(
    'split',
    (_ctx, s, sep) => {
      const text = expectText('split', 's', s);
      const separator = expectText('split', 'sep', sep);
      // An empty separator splits into characters (code points, so emoji stay whole).
      return separator === '' ? [...text] : text.split(separator);
    },
    {
      params: [
        { name: 's', type: 'text' },
        { name: 'sep', type: 'text' },
      ],
      returns: 'list',
      doc: "Splits the text at every occurrence of the literal separator into a list of texts; an empty separator splits into characters (code points): split('a,b', ',') is ['a', 'b'].",
    },
  );

  rvm.native(
    'replace',
    (_ctx, s, from, to) => {
      const text = expectText('replace', 's', s);
      const search = expectText('replace', 'from', from);
      const replacement = expectText('replace', 'to', to);
      if (search === '') return text;
      const parts = text.split(search);
      checkLength('replace', text.length + (parts.length - 1) * (replacement.length - search.length));
      return parts.join(replacement);
    },
    {
      params: [
        { name: 's', type: 'text' },
        { name: 'from', type: 'text' },
        { name: 'to', type: 'text' },
      ],
      returns: 'text',
      doc: "Replaces every occurrence of the literal text `from` (not a pattern) with `to`; an empty `from` leaves the text unchanged; a result over 16 Mi characters is a text_too_long error.",
    },
  );

  rvm.native('starts_with', (_ctx, s, prefix) => expectText('starts_with', 's', s).startsWith(expectText('starts_with', 'prefix', prefix)), {
    params: [
      { name: 's', type: 'text' },
      { name: 'prefix', type: 'text' },
    ],
    returns: 'bool',
    doc: 'True when the text begins with the given prefix (case-sensitive).',
  });

  rvm.native('ends_with', (_ctx, s, suffix) => expectText('ends_with', 's', s).endsWith(expectText('ends_with', 'suffix', suffix)), {
    params: [
      { name: 's', type: 'text' },
      { name: 'suffix', type: 'text' },
    ],
    returns: 'bool',
    doc: 'True when the text ends with the given suffix (case-sensitive).',
  });
}
