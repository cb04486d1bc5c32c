import test from 'ava';

import { splitTitle, titleKey, workKind, workTitle, type WorkKind } from '../src/domain/titles.js';

// Titles are real rows of goodbooks-10k books.csv `title` and Book-Crossing BX-Books.csv `Book-Title`,
// except a few made up to isolate one rule ("Straße Æsop Ørsted").

// ---------------------------------------------------------------------------------------------
// splitTitle: series

test('a goodbooks series suffix becomes series and number', (t) => {
  t.deepEqual(splitTitle('The Hunger Games (The Hunger Games, #1)'), {
    title: 'The Hunger Games',
    subtitle: null,
    series: 'The Hunger Games',
    seriesNumber: '1',
  });
  t.deepEqual(splitTitle("Harry Potter and the Sorcerer's Stone (Harry Potter, #1)"), {
    title: "Harry Potter and the Sorcerer's Stone",
    subtitle: null,
    series: 'Harry Potter',
    seriesNumber: '1',
  });
});

test('a series number may be a range or a fraction', (t) => {
  t.is(splitTitle('Vampire Academy Collection (Vampire Academy, #1-3)').seriesNumber, '1-3');
  t.is(splitTitle("Danger in the Shadows (O'Malley #0.5)").seriesNumber, '0.5');
  t.is(splitTitle('The Slow Regard of Silent Things (The Kingkiller Chronicle #2.5)').seriesNumber, '2.5');
});

test('an en dash in a series range is written as a hyphen', (t) => {
  t.is(splitTitle('The Oedipus Cycle: Oedipus Rex/Oedipus at Colonus/Antigone (The Theban Plays, #1–3)').seriesNumber, '1-3');
});

test('a series without a comma before the number is recognized', (t) => {
  t.deepEqual(splitTitle('Dune (Dune Chronicles #1)'), {
    title: 'Dune',
    subtitle: null,
    series: 'Dune Chronicles',
    seriesNumber: '1',
  });
});

test('odd spacing around the series marker is tolerated', (t) => {
  t.like(splitTitle('Beyond Exile (Day by Day Armageddon,# 2)'), { series: 'Day by Day Armageddon', seriesNumber: '2' });
  t.like(splitTitle('Sabriel (Abhorsen,  #1)'), { series: 'Abhorsen', seriesNumber: '1' });
  t.like(splitTitle('Judy Moody (Judy Moody, # 1)'), { series: 'Judy Moody', seriesNumber: '1' });
  t.like(splitTitle('One Thousand White Women: The Journals of May Dodd (One Thousand White Women#1)'), {
    series: 'One Thousand White Women',
    seriesNumber: '1',
  });
});

test('of several series the first is kept', (t) => {
  t.like(splitTitle('Mort (Death, #1; Discworld, #4)'), { title: 'Mort', series: 'Death', seriesNumber: '1' });
  t.like(splitTitle('Night Play (Dark-Hunter #5, Were-Hunter #1)'), { series: 'Dark-Hunter', seriesNumber: '5' });
});

test('text after the series number is dropped from the number', (t) => {
  t.like(splitTitle('A Storm of Swords: Blood and Gold (A Song of Ice and Fire, #3: Part 2 of 2)'), {
    title: 'A Storm of Swords',
    subtitle: 'Blood and Gold',
    series: 'A Song of Ice and Fire',
    seriesNumber: '3',
  });
});

test('parentheses nested inside the series are kept in its name', (t) => {
  t.deepEqual(splitTitle('Ranma ½, Vol. 1 (Ranma ½ (US 2nd), #1)'), {
    title: 'Ranma ½, Vol. 1',
    subtitle: null,
    series: 'Ranma ½ (US 2nd)',
    seriesNumber: '1',
  });
});

test('a trailing parenthetical without # is part of the title, not a series', (t) => {
  t.deepEqual(splitTitle('I Am America (And So Can You!)'), {
    title: 'I Am America (And So Can You!)',
    subtitle: null,
    series: null,
    seriesNumber: null,
  });
  t.is(splitTitle('The Firm (Penguin Readers, Level 5)').title, 'The Firm (Penguin Readers, Level 5)');
  t.is(splitTitle('The Intelligent Investor (Collins Business Essentials)').series, null);
});

test('a # outside a trailing parenthetical is not a series', (t) => {
  t.like(splitTitle('Saga #1'), { title: 'Saga #1', series: null });
  t.like(splitTitle('#GIRLBOSS'), { title: '#GIRLBOSS', series: null });
});

// ---------------------------------------------------------------------------------------------
// splitTitle: subtitles and whitespace

test('a subtitle after ": " is split off', (t) => {
  t.deepEqual(splitTitle('Flu: The Story of the Great Influenza Pandemic of 1918 and the Search for the Virus That Caused It'), {
    title: 'Flu',
    subtitle: 'The Story of the Great Influenza Pandemic of 1918 and the Search for the Virus That Caused It',
    series: null,
    seriesNumber: null,
  });
});

test('only the first ": " splits; later colons stay in the subtitle', (t) => {
  t.like(splitTitle('Food Inc.: A Participant Guide: How Industrial Food is Making Us Sicker'), {
    title: 'Food Inc.',
    subtitle: 'A Participant Guide: How Industrial Food is Making Us Sicker',
  });
});

test('a colon inside parentheses does not split the title', (t) => {
  t.like(splitTitle("America (The Book): A Citizen's Guide to Democracy Inaction"), {
    title: 'America (The Book)',
    subtitle: "A Citizen's Guide to Democracy Inaction",
  });
});

test('a title, subtitle and series all come apart', (t) => {
  t.deepEqual(splitTitle('Never Never: Part Two (Never Never, #2)'), {
    title: 'Never Never',
    subtitle: 'Part Two',
    series: 'Never Never',
    seriesNumber: '2',
  });
});

test('a trailing parenthetical without # stays with the subtitle', (t) => {
  t.deepEqual(splitTitle('Vampire Academy: The Ultimate Guide (Vampire Academy)'), {
    title: 'Vampire Academy',
    subtitle: 'The Ultimate Guide (Vampire Academy)',
    series: null,
    seriesNumber: null,
  });
});

test('whitespace is trimmed and collapsed', (t) => {
  t.deepEqual(splitTitle('  Amelia Bedelia   (Amelia Bedelia #1) '), {
    title: 'Amelia Bedelia',
    subtitle: null,
    series: 'Amelia Bedelia',
    seriesNumber: '1',
  });
});

test('the title is never empty: a bare series falls back to the raw text', (t) => {
  t.like(splitTitle('(Harry Potter, #1)'), { title: '(Harry Potter, #1)', series: null });
  t.like(splitTitle(': Untitled'), { title: ': Untitled', subtitle: null });
});

// ---------------------------------------------------------------------------------------------
// titleKey

test('the key is lower case with punctuation removed', (t) => {
  t.is(titleKey("Ender's Game"), 'enders game');
  t.is(titleKey('Harry Potter and the Half-Blood Prince'), 'harry potter and the half blood prince');
  t.is(titleKey('Ida B. . . and Her Plans to Maximize Fun'), 'ida b and her plans to maximize fun');
});

test('a curly apostrophe gives the same key as a straight one', (t) => {
  t.is(titleKey('Ender’s Game'), titleKey("Ender's Game"));
});

test('the key folds diacritics and special letters', (t) => {
  t.is(titleKey('Cien años de soledad'), 'cien anos de soledad');
  t.is(titleKey('Straße Æsop Ørsted'), 'strasse aesop orsted');
});

test('an ampersand reads as "and"', (t) => {
  t.is(titleKey('Angels & Demons'), titleKey('Angels and Demons'));
  t.is(titleKey('Griffin & Sabine'), 'griffin and sabine');
});

test('a leading article is dropped, in English and a few other languages', (t) => {
  t.is(titleKey('The Lord of the Rings'), 'lord of the rings');
  t.is(titleKey('A Game of Thrones'), 'game of thrones');
  t.is(titleKey('An Abundance of Katherines'), 'abundance of katherines');
  t.is(titleKey('Le Petit Prince'), 'petit prince');
  t.is(titleKey('Die Verwandlung'), 'verwandlung');
  t.is(titleKey("L'Étranger"), 'etranger');
});

test('an article inside the title is kept', (t) => {
  t.is(titleKey('Gone with the Wind'), 'gone with the wind');
});

test('a title that is only an article keeps it', (t) => {
  t.is(titleKey('The'), 'the');
});

test('editions spelled differently share a key (Book-Crossing and goodbooks)', (t) => {
  t.is(titleKey(splitTitle('Angels & Demons  (Robert Langdon, #1)').title), titleKey('Angels and Demons'));
  t.is(titleKey(splitTitle('The Da Vinci Code (Robert Langdon, #2)').title), titleKey('Da Vinci Code'));
});

test('whitespace in the key is collapsed', (t) => {
  t.is(titleKey('  The   Kite\tRunner '), 'kite runner');
});

test('scripts without case are kept as they are', (t) => {
  t.is(titleKey('ذاكرة الجسد'), 'ذاكرة الجسد');
});

test('workTitle drops edition labels (imprint, format, language edition, volume, reading group, series label) and keeps a parenthetical that reads on', (t) => {
  const cases: [string, string][] = [
    ["1984 (Everyman's Library)", '1984'],
    ['1984 (Signet Classics (Paperback))', '1984'],
    ['1984 (Spanish Language Edition)', '1984'],
    ["Harry Potter and the Sorcerer's Stone (Book 1)", "Harry Potter and the Sorcerer's Stone"],
    ["She's Come Undone (Oprah's Book Club)", "She's Come Undone"],
    ["The Hitchhiker's Guide to the Galaxy (Hitchhiker's Trilogy (Paperback))", "The Hitchhiker's Guide to the Galaxy"],
    ['GOOD MOTHER, THE', 'GOOD MOTHER'],
    ['I Am America (And So Can You!)', 'I Am America (And So Can You!)'],
    ['Lamb (the Gospel According to Biff)', 'Lamb (the Gospel According to Biff)'],
    ['(Untitled)', '(Untitled)'],
  ];
  for (const [title, expected] of cases) t.is(workTitle(title), expected, title);
});

const kindOfTitle = (raw: string): WorkKind => {
  const parts = splitTitle(raw);
  return workKind({ title: parts.title, subtitle: parts.subtitle, seriesNumber: parts.seriesNumber });
};

test('workKind tells boxsets, omnibuses and companions from books', (t) => {
  const cases: [string, WorkKind][] = [
    ['The Hunger Games Trilogy Boxset (The Hunger Games, #1-3)', 'boxset'],
    ['Sookie Stackhouse 7-copy Boxed Set (Sookie Stackhouse #1-7)', 'boxset'],
    ['The Lord of the Rings (The Lord of the Rings, #1-3)', 'omnibus'],
    ['The Complete Sherlock Holmes', 'omnibus'],
    ['Harry Potter: Page to Screen', 'companion'],
    ['Fantastic Beasts and Where to Find Them: The Original Screenplay', 'companion'],
    ['The Beatrice Letters (A Series of Unfortunate Events companion)', 'companion'],
    ["The Hitchhiker's Guide to the Galaxy (Hitchhiker's Trilogy (Paperback))", 'book'],
    ['Heart-Shaped Box', 'book'],
    ['The Art of War', 'book'],
    ['The Hunger Games (The Hunger Games, #1)', 'book'],
  ];
  for (const [title, expected] of cases) t.is(kindOfTitle(title), expected, title);
});

test('a summary, study guide, notes, teaching guide, novel study or workbook to a book is a companion of it', (t) => {
  const companions = [
    'BookRags Summary:  A Storm of Swords',
    'Summary of The Great Gatsby by F. Scott Fitzgerald',
    'Summary & Analysis of The Hunger Games',
    'Atomic Habits: Summary',
    'Analysis of Hamlet',
    'Study Guide: Of Mice and Men',
    'The Catcher in the Rye: A Study Guide',
    'SparkNotes: To Kill a Mockingbird',
    "CliffsNotes on Orwell's 1984",
    'York Notes on Macbeth',
    'Hamlet: Notes',
    'Reading Guide to Beloved',
    "Teacher's Guide to Holes",
    'Ralph S. Mouse by Beverly Cleary: Teacher Guide (Novel Units)',
    'Number the Stars: A Novel Study',
    "Workbook for The Artist's Way",
    'Experiencing God : Knowing and Doing His Will - Workbook',
  ];
  for (const title of companions) t.is(kindOfTitle(title), 'companion', title);
});

test('a book retold as a graphic novel is a companion, a book first written as one is not', (t) => {
  t.is(kindOfTitle('The Hobbit: Graphic Novel'), 'companion');
  t.is(kindOfTitle('Twilight: The Graphic Novel, Vol. 1 (Twilight: The Graphic Novel, #1)'), 'companion');
  t.is(kindOfTitle('The Legend of Sleepy Hollow (Graphic Novel)'), 'companion');
  t.is(kindOfTitle('Seconds: A Graphic Novel'), 'book');
});

test('a book whose title only holds a study word (notes, summary, analysis, workbook) stays a book', (t) => {
  const books = [
    'Notes from a Small Island',
    'Notes on a Scandal',
    "I'm a Stranger Here Myself: Notes on Returning to America after Twenty Years Away",
    'Summary Judgment',
    'The Analysis of Mind',
    'The Anxiety and Phobia Workbook',
    'Teaching to Transgress',
  ];
  for (const title of books) t.is(kindOfTitle(title), 'book', title);
});
