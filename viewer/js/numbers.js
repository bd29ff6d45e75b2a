/* Numbers for people: floats shown with about four significant digits, integers with digit
   grouping (a count with its noun is i18n.js's tCount). The trace keeps every value exact; these
   only decide how a value is shown, and exactFloat gives back Python's full repr for hovering
   and copying. */

const GROUPED = new Intl.NumberFormat('en-US', { maximumFractionDigits: 20 });
const SIGNIFICANT = 4;

/** Python's float repr, every digit: 0.1 -> "0.1", 2 -> "2.0", 6.1e-05 -> "6.1e-05", "nan" -> "nan". */
export function exactFloat(v) {
  if (typeof v === 'string') return v;
  const abs = Math.abs(v);
  if (abs !== 0 && (abs < 1e-4 || abs >= 1e16)) {
    const [mantissa, exponent] = v.toExponential().split('e');
    return `${mantissa}e${exponent[0]}${exponent.slice(1).padStart(2, '0')}`;
  }
  return Number.isInteger(v) ? v.toFixed(1) : String(v);
}

/** A float rounded for reading: 1800000000000 -> "1.8e12", 0.3076923 -> "0.3077", 2 -> "2.0",
    52219.61 -> "52,219.6", 6.1035e-05 -> "6.104e-5". Numbers below 1e5 keep their integer
    digits (and one decimal at least, so a float still looks like one); others go to
    scientific notation with the exponent written plainly. */
export function shortFloat(v) {
  if (typeof v === 'string') return v; // "nan", "inf", "-inf"
  const abs = Math.abs(v);
  if (abs === 0) return Object.is(v, -0) ? '-0.0' : '0.0';
  if (abs >= 1e5 || abs < 1e-4) {
    const [mantissa, exponent] = v.toExponential(SIGNIFICANT - 1).split('e');
    return `${trimZeros(mantissa)}e${exponent.replace('+', '')}`;
  }
  if (Number.isInteger(v)) return `${GROUPED.format(v)}.0`;
  const integerDigits = abs < 1 ? 0 : Math.floor(Math.log10(abs)) + 1;
  const decimals = abs < 1 ? SIGNIFICANT - 1 - Math.floor(Math.log10(abs)) : Math.max(1, SIGNIFICANT - integerDigits);
  const rounded = trimZeros(v.toFixed(decimals));
  const [whole, fraction] = rounded.split('.');
  return `${GROUPED.format(Number(whole))}${fraction ? `.${fraction}` : '.0'}`;
}

function trimZeros(text) {
  return text.includes('.') ? text.replace(/0+$/, '').replace(/\.$/, '') : text;
}

/** An integer (a number, or the decimal string of a big one) with digit grouping: 1800000 -> "1,800,000". */
export function groupDigits(n) {
  if (typeof n === 'number') return Number.isSafeInteger(n) ? GROUPED.format(n) : String(n);
  const text = String(n);
  const match = /^(-?)(\d+)$/.exec(text);
  return match ? match[1] + match[2].replace(/\B(?=(\d{3})+$)/g, ',') : text;
}
