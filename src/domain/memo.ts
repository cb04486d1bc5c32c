/**
 * A pure function of a string, remembering its answers: matching folds and keys the same titles and
 * names again and again (a record's own against each of its candidates, a candidate for every
 * record that finds it), and folding them is most of what weighing a candidate costs. At most
 * `max` answers are kept; then they are forgotten together, which costs less than tracking which
 * one was used last.
 */
export function rememberingAnswers(compute: (text: string) => string, max = 20_000): (text: string) => string {
  const answers = new Map<string, string>();
  return (text) => {
    let answer = answers.get(text);
    if (answer === undefined) {
      if (answers.size >= max) answers.clear();
      answer = compute(text);
      answers.set(text, answer);
    }
    return answer;
  };
}
