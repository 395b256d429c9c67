/**
 * How text becomes search words: the same for the tools indexed and for the words searched, so
 * both sides (and the SQL search in tool-repository.ts) agree on what a word is.
 */

/** Words of a text as the search sees them: NFKC, lower case, runs of letters and digits. */
export function searchWords(text: string): string[] {
  return (
    text
      .normalize('NFKC')
      .toLowerCase()
      .match(/[\p{L}\p{N}]+/gu) ?? []
  );
}

/**
 * A tool name as an exact search compares it: its words, space-separated (`Get_Weather` and
 * `get-weather` are both `get weather`). A search whose words, as given, are exactly these finds
 * the tool first.
 */
export function exactName(name: string): string {
  return searchWords(name).join(' ');
}
