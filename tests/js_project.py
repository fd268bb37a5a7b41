"""A small real Node project (node:test, no install needed) for the JavaScript/TypeScript tests."""

from __future__ import annotations

import json

RANGE = """\
'use strict';

/**
 * Clamps a value into [low, high].
 */
function clamp(value, low, high) {
  if (value < low) return low;
  if (value > high) return high;
  return value;
}

const windowOf = (items, start, size) => {
  const end = start + size;
  return items.slice(start, end);
};

exports.total = function (values) {
  let sum = 0;
  for (const v of values) {
    sum += v;
  }
  return sum;
};

function formatMessage(label, unit, value, low, high) {
  return label + ' ' + value + ' ' + unit + ' in ' + low + '..' + high;
}

function describe(value, low, high) {
  const label = 'range';
  const unit = 'items';
  const message = formatMessage(label, unit, clamp(value, low, high), low, high);
  return message;
}

module.exports.clamp = clamp;
module.exports.windowOf = windowOf;
module.exports.describe = describe;
"""

TEXT = """\
'use strict';

const SEPARATOR = ' ';

class Words {
  constructor(text) {
    this.text = text;
  }

  count() {
    if (this.text === '') return 0;
    return this.text.split(SEPARATOR).length;
  }

  first() {
    const parts = this.text.split(SEPARATOR);
    return parts[0];
  }

  join(words, sep) {
    if (sep === undefined) sep = SEPARATOR;
    return words.join(sep);
  }
}

module.exports = { Words };
"""

TEST_RANGE = """\
'use strict';
const test = require('node:test');
const assert = require('node:assert');
const { clamp, windowOf, total, describe } = require('../lib/range');

test('clamp', () => {
  assert.strictEqual(clamp(5, 0, 10), 5);
  assert.strictEqual(clamp(-1, 0, 10), 0);
  assert.strictEqual(clamp(11, 0, 10), 10);
  assert.strictEqual(clamp(10, 0, 10), 10);
});

test('windowOf', () => {
  assert.deepStrictEqual(windowOf([1, 2, 3, 4], 1, 2), [2, 3]);
});

test('total', () => {
  assert.strictEqual(total([1, 2, 3]), 6);
});

test('describe', () => {
  assert.strictEqual(describe(12, 0, 10), 'range 10 items in 0..10');
});
"""

TEST_TEXT = """\
'use strict';
const test = require('node:test');
const assert = require('node:assert');
const { Words } = require('../lib/text');

test('count', () => {
  assert.strictEqual(new Words('a b c').count(), 3);
  assert.strictEqual(new Words('').count(), 0);
});

test('first', () => {
  assert.strictEqual(new Words('a b').first(), 'a');
});

test('join', () => {
  assert.strictEqual(new Words('').join(['a', 'b']), 'a b');
  assert.strictEqual(new Words('').join(['a', 'b'], '-'), 'a-b');
});
"""

JS_PROJECT = {
    "package.json": json.dumps({"name": "tiny", "version": "1.0.0", "private": True,
                                "scripts": {"test": "node --test test/"}}, indent=2) + "\n",
    "lib/range.js": RANGE,
    "lib/text.js": TEXT,
    "test/range.test.js": TEST_RANGE,
    "test/text.test.js": TEST_TEXT,
    "eslint.config.mjs": "export default [];\n",
}
