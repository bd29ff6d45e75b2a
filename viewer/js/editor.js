/* The code editor for lecture sources: CodeMirror 6, vendored as its published ES modules under
   vendor/codemirror/ (see DEVELOPERS.md "The editor"), loaded the first time the editor opens,
   so a reader who never edits (and every static site) fetches none of it.

   What it adds to CodeMirror's basics: Python highlighting in the code pane's own colours
   (highlight.css's tok- classes, light and dark), Tab inserting spaces or indenting the selected
   lines, Ctrl/Cmd+S handed to the caller, CodeMirror's phrases (search panel, go to line) in the
   viewer's language, and the cursor's line and column for the caller's status line. */

import { language, onLanguageChange } from './i18n.js';

const VENDOR = '../vendor/codemirror/';
const INDENT = '    ';

/* CodeMirror's own words (its `phrase` calls in the modules we load), by their English. */
const PHRASES = {
  ru: {
    'Find': 'Найти', 'Replace': 'Заменить', 'next': 'далее', 'previous': 'назад', 'all': 'все',
    'match case': 'с учётом регистра', 'regexp': 'рег. выражение', 'by word': 'слово целиком',
    'replace': 'заменить', 'replace all': 'заменить все', 'close': 'закрыть', 'current match': 'текущее совпадение',
    'on line': 'в строке', 'replaced match on line $': 'заменено совпадение в строке $', 'replaced $ matches': 'заменено совпадений: $',
    'Go to line': 'Перейти к строке', 'go': 'перейти', 'Selection deleted': 'Выделение удалено',
    'Control character': 'Управляющий символ', 'Completions': 'Варианты', 'to': 'до',
  },
  zh: {
    'Find': '查找', 'Replace': '替换', 'next': '下一个', 'previous': '上一个', 'all': '全部',
    'match case': '区分大小写', 'regexp': '正则表达式', 'by word': '全词匹配',
    'replace': '替换', 'replace all': '全部替换', 'close': '关闭', 'current match': '当前匹配',
    'on line': '位于行', 'replaced match on line $': '已替换第 $ 行的匹配', 'replaced $ matches': '已替换 $ 处匹配',
    'Go to line': '跳转到行', 'go': '跳转', 'Selection deleted': '已删除选中内容',
    'Control character': '控制字符', 'Completions': '补全', 'to': '至',
  },
};

let modules = null;

/** The CodeMirror modules, fetched once (all at the same time: they import each other). */
function loadCodeMirror() {
  const names = ['state', 'view', 'commands', 'language', 'search', 'autocomplete', 'lang-python', 'lezer-highlight'];
  modules ??= Promise.all(names.map((name) => import(new URL(`${VENDOR}${name}.js`, import.meta.url).href)))
    .then((loaded) => Object.fromEntries(names.map((name, i) => [name, loaded[i]])));
  return modules;
}

/** Syntax tags -> the tok- classes the code pane's highlighting (pygments) uses, so that both
    read alike in either colour scheme. */
function codePaneHighlighter(tags, tagHighlighter) {
  return tagHighlighter([
    { tag: [tags.keyword, tags.controlKeyword, tags.definitionKeyword, tags.moduleKeyword, tags.operatorKeyword], class: 'tok-k' },
    { tag: [tags.bool, tags.null], class: 'tok-kc' },
    { tag: tags.self, class: 'tok-bp' },
    { tag: [tags.string, tags.special(tags.string)], class: 'tok-s' },
    { tag: tags.escape, class: 'tok-se' },
    { tag: tags.comment, class: 'tok-c' },
    { tag: tags.number, class: 'tok-m' },
    { tag: tags.function(tags.definition(tags.variableName)), class: 'tok-nf' },
    { tag: tags.definition(tags.className), class: 'tok-nc' },
    { tag: tags.meta, class: 'tok-nd' },
    { tag: [tags.operator, tags.derefOperator], class: 'tok-o' },
  ]);
}

function phrasesFor(code) {
  return PHRASES[code] || {};
}

export class CodeEditor {
  /** await CodeEditor.create({label, onChange, onSave, onCursor}): an editor whose `root` goes in the page. */
  static async create(options) {
    return new CodeEditor(await loadCodeMirror(), options);
  }

  constructor(cm, { label, onChange = () => {}, onSave = () => {}, onCursor = () => {} }) {
    const { EditorState, EditorSelection, Compartment } = cm.state;
    const { EditorView, keymap, lineNumbers, highlightActiveLine, highlightActiveLineGutter, drawSelection,
      highlightSpecialChars, dropCursor, rectangularSelection, crosshairCursor } = cm.view;
    const { history, historyKeymap, defaultKeymap, indentMore, indentLess, toggleComment } = cm.commands;
    const { indentOnInput, bracketMatching, syntaxHighlighting, indentUnit } = cm.language;
    const { search, searchKeymap, highlightSelectionMatches } = cm.search;
    const { closeBrackets, closeBracketsKeymap } = cm.autocomplete;
    this.cm = cm;
    this.phrases = new Compartment();

    /* Tab: spaces up to the next indentation stop at the cursor, or the selected lines one level in. */
    const tab = (view) => {
      if (view.state.selection.ranges.some((range) => !range.empty)) return indentMore(view);
      view.dispatch(view.state.changeByRange((range) => {
        const line = view.state.doc.lineAt(range.head);
        const spaces = INDENT.slice((range.head - line.from) % INDENT.length);
        return { changes: { from: range.head, insert: spaces }, range: EditorSelection.cursor(range.head + spaces.length) };
      }), { userEvent: 'input', scrollIntoView: true });
      return true;
    };
    const save = () => {
      onSave();
      return true;
    };

    const extensions = [
      lineNumbers(), highlightActiveLineGutter(), highlightSpecialChars(), history(), drawSelection(), dropCursor(),
      EditorState.allowMultipleSelections.of(true), indentOnInput(), bracketMatching(), closeBrackets(),
      rectangularSelection(), crosshairCursor(), highlightActiveLine(), highlightSelectionMatches(),
      search({ top: true }), indentUnit.of(INDENT), EditorState.tabSize.of(4),
      cm['lang-python'].python(), syntaxHighlighting(codePaneHighlighter(cm['lezer-highlight'].tags, cm['lezer-highlight'].tagHighlighter)),
      keymap.of([
        { key: 'Mod-s', run: save, preventDefault: true },
        { key: 'Tab', run: tab, shift: indentLess },
        { key: 'Mod-/', run: toggleComment },
        ...closeBracketsKeymap, ...searchKeymap, ...historyKeymap, ...defaultKeymap,
      ]),
      EditorView.contentAttributes.of({ 'aria-label': label, spellcheck: 'false', autocapitalize: 'off', autocorrect: 'off' }),
      EditorView.updateListener.of((update) => {
        if (update.docChanged) onChange();
        if (update.docChanged || update.selectionSet) onCursor();
      }),
    ];
    // A new state per text (so that undo starts there), in the language chosen by then.
    this.stateFor = (doc) => EditorState.create({ doc, extensions: [extensions, this.phrases.of(EditorState.phrases.of(phrasesFor(language())))] });
    this.view = new EditorView({ state: this.stateFor('') });
    this.root = this.view.dom;
    onLanguageChange((code) => this.view.dispatch({ effects: this.phrases.reconfigure(EditorState.phrases.of(phrasesFor(code))) }));
  }

  get value() {
    return this.view.state.doc.toString();
  }

  /** Replace the whole text as a fresh start: undo cannot go back past it. */
  set value(text) {
    this.view.setState(this.stateFor(text));
  }

  focus() {
    this.view.focus();
  }

  /** The cursor's line and column, both from 1. */
  get cursor() {
    const head = this.view.state.selection.main.head;
    const line = this.view.state.doc.lineAt(head);
    return { line: line.number, column: head - line.from + 1 };
  }

  /** Put the cursor at the start of `line` and scroll it to a third of the way down. */
  goToLine(line) {
    const { EditorView } = this.cm.view;
    const doc = this.view.state.doc;
    const target = doc.line(Math.min(Math.max(1, line), doc.lines));
    this.view.dispatch({ selection: { anchor: target.from }, effects: EditorView.scrollIntoView(target.from, { y: 'start', yMargin: this.view.dom.clientHeight / 3 }) });
  }
}
