import test from 'ava';

import { isbn10To13, isbn13To10, parseIsbn, recoverGoodbooksIsbn } from '../src/domain/isbn.js';

// Rows below are real: goodbooks-10k books.csv (book_id, isbn, isbn13) and Book-Crossing BX-Books.csv.

// ---------------------------------------------------------------------------------------------
// parseIsbn

test('a clean ISBN-10 is read with its ISBN-13', (t) => {
  t.deepEqual(parseIsbn('0439023483'), { isbn10: '0439023483', isbn13: '9780439023481' });
});

test('a clean ISBN-13 with prefix 978 is read with its ISBN-10', (t) => {
  t.deepEqual(parseIsbn('9780439023481'), { isbn10: '0439023483', isbn13: '9780439023481' });
});

test('hyphens and spaces are ignored', (t) => {
  t.deepEqual(parseIsbn('0-439-02348-3'), parseIsbn('0439023483'));
  t.deepEqual(parseIsbn(' 978 0 439 02348 1 '), parseIsbn('0439023483'));
  t.deepEqual(parseIsbn('978–0–439–02348–1'), parseIsbn('0439023483')); // en dashes, as pasted from the web
});

test('an ISBN-10 ending in a lower-case x is normalized to X', (t) => {
  // Book-Crossing writes 039592720x
  t.deepEqual(parseIsbn('039592720x'), { isbn10: '039592720X', isbn13: '9780395927205' });
});

test('an ISBN-10 with a wrong check digit is rejected', (t) => {
  t.is(parseIsbn('0439023484'), null);
});

test('an ISBN-13 with a wrong check digit is rejected', (t) => {
  t.is(parseIsbn('9780439023482'), null);
});

test('an ISBN-13 with prefix 979 has no ISBN-10', (t) => {
  t.deepEqual(parseIsbn('979-10-90636-07-1'), { isbn13: '9791090636071', isbn10: null });
});

test('an EAN-13 outside the 978 and 979 book prefixes is not an ISBN', (t) => {
  t.is(parseIsbn('5901234123457'), null); // a valid EAN-13 check digit, but not a book
});

test('an X anywhere but the last place of an ISBN-10 is rejected', (t) => {
  t.is(parseIsbn('04251863X0'), null);
});

test('text that is not an ISBN is rejected', (t) => {
  for (const input of ['', '   ', 'isbn', '123', '04390234830', '978043902348', '9780439023481x', '0439023483 0439023483']) {
    t.is(parseIsbn(input), null, input);
  }
});

// ---------------------------------------------------------------------------------------------
// Conversions

test('an ISBN-10 converts to its ISBN-13 and back', (t) => {
  for (const isbn10 of ['0002005018', '0374157065', '042518630X', '087113375X']) {
    const isbn13 = isbn10To13(isbn10);
    t.regex(isbn13, /^978\d{10}$/);
    t.is(isbn13To10(isbn13), isbn10);
  }
});

test('an ISBN-10 ending in X gets a digit check digit in its ISBN-13', (t) => {
  t.is(isbn10To13('042518630X'), '9780425186305');
});

test('an ISBN-13 with prefix 979 converts to no ISBN-10', (t) => {
  t.is(isbn13To10('9791090636071'), null);
});

test('conversions refuse text that is not a normalized ISBN', (t) => {
  t.throws(() => isbn10To13('0-439-02348-3'), { instanceOf: RangeError });
  t.throws(() => isbn10To13('043902348x'), { instanceOf: RangeError });
  t.throws(() => isbn13To10('978-0439023481'), { instanceOf: RangeError });
});

// ---------------------------------------------------------------------------------------------
// recoverGoodbooksIsbn: the isbn column

test('an ISBN-10 that lost one leading zero is padded back (goodbooks 1, The Hunger Games)', (t) => {
  t.deepEqual(recoverGoodbooksIsbn('439023483', '9.78043902348e+12'), {
    isbn: { isbn10: '0439023483', isbn13: '9780439023481' },
    repaired: true,
    problem: null,
  });
});

test('an ISBN-10 that lost three leading zeros is padded back (goodbooks 69, Insurgent)', (t) => {
  t.deepEqual(recoverGoodbooksIsbn('7442912', '9.78000744291e+12').isbn, {
    isbn10: '0007442912',
    isbn13: '9780007442911',
  });
});

test('a ten-digit ISBN-10 still counts as repaired when its ISBN-13 had to be derived (goodbooks 9)', (t) => {
  const recovered = recoverGoodbooksIsbn('1416524797', '9.78141652479e+12');
  t.deepEqual(recovered.isbn, { isbn10: '1416524797', isbn13: '9781416524793' });
  t.true(recovered.repaired);
});

test('clean columns, as the catalogue generator writes them, are used unrepaired', (t) => {
  t.deepEqual(recoverGoodbooksIsbn('0439023483', '9780439023481'), {
    isbn: { isbn10: '0439023483', isbn13: '9780439023481' },
    repaired: false,
    problem: null,
  });
});

test('an ISBN-10 alone is enough, its ISBN-13 derived', (t) => {
  const recovered = recoverGoodbooksIsbn('0439023483', '');
  t.is(recovered.isbn?.isbn13, '9780439023481');
  t.true(recovered.repaired);
});

test('a valid ISBN-10 wins over a float ISBN-13 that disagrees, without complaint (goodbooks 622)', (t) => {
  // Nights in Rodanthe: the float reads as 9780553813951, another edition.
  t.deepEqual(recoverGoodbooksIsbn('446612707', '9.78055381395e+12'), {
    isbn: { isbn10: '0446612707', isbn13: '9780446612708' },
    repaired: true,
    problem: null,
  });
});

// ---------------------------------------------------------------------------------------------
// recoverGoodbooksIsbn: the isbn13 column

test('a float ISBN-13 whose check digit is below 5 is read unambiguously (goodbooks 260)', (t) => {
  // F = 978067172365 with check digit 1 fits; F - 1 would need a check digit of 5 or more, but gets 4.
  t.deepEqual(recoverGoodbooksIsbn('', '9.78067172365e+12'), {
    isbn: { isbn10: '0671723650', isbn13: '9780671723651' },
    repaired: true,
    problem: null,
  });
});

test('a float ISBN-13 that was rounded up is read from the prefix below (goodbooks 5500)', (t) => {
  // Jacob Have I Loved: F = 978006440369 would need check digit ≤ 5 but gets 6; F - 1 gets 9, which rounds up.
  t.is(recoverGoodbooksIsbn('', '9.78006440369e+12').isbn?.isbn13, '9780064403689');
});

test('a float ISBN-13 that fits two readings is ambiguous and not used (goodbooks 799)', (t) => {
  t.deepEqual(recoverGoodbooksIsbn('', '9.7804251888e+12'), {
    isbn: null,
    repaired: false,
    problem: 'no ISBN-10 and ISBN-13 is ambiguous',
  });
});

test('a check digit of 5 may have rounded either way, so its float alone is ambiguous (goodbooks 5)', (t) => {
  // The Great Gatsby is 9780743273565; goodbooks wrote 9.78074327356e+12.
  t.is(recoverGoodbooksIsbn('', '9.78074327356e+12').problem, 'no ISBN-10 and ISBN-13 is ambiguous');
  t.is(recoverGoodbooksIsbn('743273567', '9.78074327356e+12').isbn?.isbn13, '9780743273565');
});

test('a float outside the book prefixes is not an ISBN (goodbooks 1165)', (t) => {
  t.is(recoverGoodbooksIsbn('', '2.94001623192e+12').problem, 'no ISBN-10 and ISBN-13 is not a valid ISBN');
});

test('a plain 13-digit integer is accepted when it validates', (t) => {
  t.deepEqual(recoverGoodbooksIsbn('', '9780439023481'), {
    isbn: { isbn10: '0439023483', isbn13: '9780439023481' },
    repaired: false,
    problem: null,
  });
  t.is(recoverGoodbooksIsbn('', '9780439023481.0').isbn?.isbn13, '9780439023481');
  t.is(recoverGoodbooksIsbn('', '9780439023482').problem, 'no ISBN-10 and ISBN-13 is not a valid ISBN');
});

test('a float ISBN-13 written with all 13 digits is read exactly', (t) => {
  t.deepEqual(recoverGoodbooksIsbn('', '9.780439023481e+12').isbn, parseIsbn('9780439023481'));
});

test('a float too short to be an ISBN-13 is malformed (goodbooks 1443)', (t) => {
  t.is(recoverGoodbooksIsbn('9380658797', '97893806587.0').problem, 'ISBN-10 checksum fails and ISBN-13 is malformed');
});

// ---------------------------------------------------------------------------------------------
// recoverGoodbooksIsbn: both columns together

test('an invalid ISBN-10 gives way to an unambiguous ISBN-13 (goodbooks 7478)', (t) => {
  t.deepEqual(recoverGoodbooksIsbn('1594631290', '9.78159463129e+12'), {
    isbn: { isbn10: '1594631298', isbn13: '9781594631290' },
    repaired: true,
    problem: null,
  });
});

test('an ISBN-10 that lost its final X picks one of two float readings (goodbooks 2374)', (t) => {
  // Angle of Repose is 014016930X; goodbooks has 140169300.
  t.deepEqual(recoverGoodbooksIsbn('140169300', '9.7801401693e+12').isbn, {
    isbn10: '014016930X',
    isbn13: '9780140169300',
  });
});

test('an ISBN-10 carrying the ISBN-13 check digit picks one of two float readings (goodbooks 1543)', (t) => {
  // The Racketeer is 0385535147 / 9780385535144; goodbooks has 385535144 and a float that fits ...143 and ...144.
  t.deepEqual(recoverGoodbooksIsbn('385535144', '9.78038553514e+12').isbn, {
    isbn10: '0385535147',
    isbn13: '9780385535144',
  });
});

test('an invalid ISBN-10 that matches neither float reading leaves the row without ISBN (goodbooks 4322)', (t) => {
  t.deepEqual(recoverGoodbooksIsbn('1400139027', '9.78140139027e+12'), {
    isbn: null,
    repaired: false,
    problem: 'ISBN-10 checksum fails and ISBN-13 is ambiguous',
  });
});

test('an invalid ISBN-10 without ISBN-13 gives no ISBN (goodbooks 1095)', (t) => {
  t.is(recoverGoodbooksIsbn('152061548', '').problem, 'ISBN-10 checksum fails and no ISBN-13');
});

test('a row with neither column has no ISBN (goodbooks 106, Bossypants)', (t) => {
  t.deepEqual(recoverGoodbooksIsbn('', ''), { isbn: null, repaired: false, problem: 'no ISBN' });
  t.is(recoverGoodbooksIsbn('  ', ' ').problem, 'no ISBN');
});

test('text in the isbn column that cannot be an ISBN-10 is malformed', (t) => {
  t.is(recoverGoodbooksIsbn('n/a', '').problem, 'ISBN-10 is malformed and no ISBN-13');
});
