/* The viewer's language: which one is chosen (?lang= in the URL, else the last one chosen,
   else English), the interface's own strings in each language (t), and the language version
   of a lecture's text rendering, falling back to English per string.

   A trace carries every language of each text() rendering (trace/README.md, "Translations"),
   so switching language needs no server: the page is drawn again from the same trace. */

import { groupDigits } from './numbers.js';

export const LANGUAGES = { en: 'English', ru: 'Русский', zh: '中文' };
const STORAGE_KEY = 'cs336-language';

const RU_ITEMS = { one: '{count} элемент', few: '{count} элемента', many: '{count} элементов', other: '{count} элемента' };

/* The interface strings, by their English. A string missing here shows in English. {name}
   is filled from t()'s second argument; an entry for a count (tCount) may hold plural forms. */
const STRINGS = {
  ru: {
    'Language': 'Язык',
    'All lectures (g)': 'Все лекции (g)',
    'Lectures': 'Лекции',
    'Contents': 'Содержание',
    'Step back (h, ←)': 'Шаг назад (h, ←)',
    'Step back': 'Шаг назад',
    'Step forward (l, →)': 'Шаг вперёд (l, →)',
    'Step forward': 'Шаг вперёд',
    'Step over, backwards (k, shift+←)': 'Шаг с обходом назад (k, shift+←)',
    'Step over backwards': 'Шаг с обходом назад',
    'Step over (j, shift+→)': 'Шаг с обходом (j, shift+→)',
    'Step over': 'Шаг с обходом',
    'Step out of this function (u)': 'Выйти из этой функции (u)',
    'Step out': 'Выйти из функции',
    'Raw': 'Код',
    'Raw: show the code under the renderings (R)': 'Код: показать код под текстом лекции (R)',
    'Reveal': 'Пройденное',
    'Reveal: only the lines run so far (A)': 'Пройденное: только уже выполненные строки (A)',
    'Keyboard shortcuts (?)': 'Клавиши (?)',
    'Keyboard shortcuts': 'Клавиши',
    'Progress through the trace (click to jump)': 'Продвижение по трассе (щелчок — перейти)',
    'Call stack': 'Стек вызовов',
    'Inspected values': 'Отслеживаемые значения',
    'Back to the list of lectures': 'К списку лекций',
    'Keys': 'Клавиши',
    'step forward': 'шаг вперёд',
    'step back': 'шаг назад',
    'step over: next line of this function (or its caller)': 'шаг с обходом: следующая строка этой функции (или вызвавшей её)',
    'step over backwards': 'шаг с обходом назад',
    'step out: back in the caller, after this call returns': 'выход из функции: в вызывающую функцию, после возврата из этого вызова',
    'raw: show the code under the renderings': 'код: показать код под текстом лекции',
    'reveal: show only the lines run so far': 'пройденное: показать только уже выполненные строки',
    'open another lecture': 'открыть другую лекцию',
    'click a line number': 'щелчок по номеру строки',
    'go to the step running it': 'перейти к шагу, который её выполняет',
    'close this help': 'закрыть эту справку',
    'Not translated yet: shown in English.': 'Ещё не переведено: показано по-английски.',
    'The translation is out of date: shown in English.': 'Перевод устарел: показано по-английски.',
    'Navigation': 'Навигация',
    'Loading {name}…': 'Загрузка {name}…',
    'Cannot show the trace "{name}"': 'Не удаётся показать трассу «{name}»',
    'The trace "{name}" is empty': 'Трасса «{name}» пуста',
    'It records no steps to show{why}. Trace the lecture again.': 'В ней нет шагов для показа{why}. Запустите трассировку лекции заново.',
    'The lecture raised an error': 'Лекция завершилась с ошибкой',
    'The run hit its step limit': 'Запуск упёрся в предел числа шагов',
    'The run timed out': 'Запуск превысил лимит времени',
    'The run ended with status {status}': 'Запуск завершился со статусом {status}',
    'show the error': 'показать ошибку',
    'line {n}': 'строка {n}',
    'step {n} of {total}': 'шаг {n} из {total}',
    '{where} (step {n})': '{where} (шаг {n})',
    'Viewing {where}. ': 'Открыто {where}. ',
    'Back to the current step (Esc)': 'Вернуться к текущему шагу (Esc)',
    'Line {n} never ran in this trace.': 'Строка {n} в этой трассе ни разу не выполнялась.',
    'Already in the outermost call.': 'Это уже самый внешний вызов.',
    'No traces yet. Trace a lecture with {command}.': 'Трасс пока нет. Трассируйте лекцию командой {command}.',
    '{n} steps': 'шагов: {n}',
    'traced {when}': 'трасса от {when}',
    'Keys in a lecture: l / h step, j / k step over, u step out, R raw code, A reveal, e edit (under cs336-lectures serve; Ctrl+S saves and re-traces), g back here, ? help.': 'Клавиши в лекции: l / h — шаг, j / k — шаг с обходом, u — выход из функции, R — код, A — пройденное, e — правка (при cs336-lectures serve; Ctrl+S сохраняет и трассирует заново), g — сюда, ? — справка.',
    'No inspected values in this frame yet. A "# @inspect x" comment on a line records x.': 'В этом кадре пока нет отслеживаемых значений. Комментарий «# @inspect x» в строке записывает x.',
    'shares storage with {names}': 'общая память с {names}',
    'Image unavailable': 'Изображение недоступно',
    'Open {where}': 'Открыть {where}',
    'Save': 'Сохранить',
    'Save and re-trace (Ctrl+S)': 'Сохранить и трассировать заново (Ctrl+S)',
    'Re-trace': 'Трассировать заново',
    'Trace the lecture again without changing it': 'Трассировать лекцию заново, не меняя её',
    'Close': 'Закрыть',
    'Close the editor (Escape)': 'Закрыть редактор (Escape)',
    'Edit': 'Править',
    'Edit this lecture and re-trace it (e)': 'Править эту лекцию и трассировать её заново (e)',
    'Show solution': 'Показать решение',
    'Hide solution': 'Скрыть решение',
    '(in a solution: show it to see this value)': '(внутри решения: откройте его, чтобы увидеть значение)',
    'edit the lecture under its code (with {command}, from the URL it printed)': 'править лекцию под её кодом (при запущенном {command}, открыв адрес, который он напечатал)',
    'in the editor: save and re-trace; Esc closes it': 'в редакторе: сохранить и трассировать заново; Esc закрывает его',
    'Width of the values panel (drag, or ← / →; double-click resets)': 'Ширина панели значений (перетащите или ← / →; двойной щелчок — сбросить)',
    'Drag to resize the values panel; double-click resets': 'Перетащите, чтобы изменить ширину панели значений; двойной щелчок — сбросить',
    'copy exact': 'копировать точно',
    'copied': 'скопировано',
    'Copy {name} with every digit': 'Скопировать {name} со всеми знаками',
    '1 step': '1 шаг',
    'file fails now': 'файл сейчас падает',
    'The file on disk fails to trace (this trace is the last good one): {error}': 'Файл на диске не удаётся трассировать (это последняя удачная трасса): {error}',
    'The file on disk fails to trace, and no run of it has written a trace yet: {error}': 'Файл на диске не удаётся трассировать, и ни один запуск ещё не записал трассу: {error}',
    'Editing needs the token the server printed at start-up: open the URL from the terminal where {command} runs, the one ending in ?token=…': 'Для правки нужен токен, который сервер напечатал при запуске: откройте адрес из терминала, где работает {command}, тот, что оканчивается на ?token=…',
    'traceback': 'трассировка стека',
    'Dismiss': 'Скрыть',
    'the re-trace failed': 'повторная трассировка не удалась',
    'Re-tracing {name} failed: {error}': 'Повторная трассировка {name} не удалась: {error}',
    '(the failed run cannot be opened: {error})': '(неудачный запуск не открывается: {error})',
    'go to line {n}': 'к строке {n}',
    'Open the failed run at the step that failed': 'Открыть неудачный запуск на шаге, где произошла ошибка',
    'edit line {n}': 'править строку {n}',
    'Open the lecture in the editor at the failing line': 'Открыть лекцию в редакторе на строке с ошибкой',
    'last good trace': 'последняя удачная трасса',
    '{title} (failed run)': '{title} (неудачный запуск)',
    'Unsaved changes': 'Есть несохранённые изменения',
    'Cannot edit {name}: {error}': 'Не удаётся править {name}: {error}',
    'No token: saving needs the URL the server printed': 'Нет токена: для сохранения откройте адрес, который напечатал сервер',
    'Unsaved changes: Ctrl+S saves, Escape again discards them': 'Есть несохранённые изменения: Ctrl+S сохраняет, повторный Escape их отбрасывает',
    'Saving…': 'Сохраняем…',
    'Not saved: {error}': 'Не сохранено: {error}',
    'Saved; re-tracing…': 'Сохранено; трассируем заново…',
    'Re-traced': 'Трассировано заново',
    'Re-traced: {message}': 'Трассировано заново: {message}',
    'Re-trace failed: {error}': 'Повторная трассировка не удалась: {error}',
    'Re-trace failed (the last good trace is still shown): {error}': 'Повторная трассировка не удалась (пока показана последняя удачная трасса): {error}',
    '{name} cannot be edited here: start the server with its lecture file ({command})': '{name} нельзя править здесь: запустите сервер с файлом этой лекции ({command})',
    'Open a lecture to edit it': 'Чтобы править лекцию, сначала откройте её',
    'Cannot re-trace {name}: {error}': 'Не удаётся заново трассировать {name}: {error}',
    'Re-tracing {name}…': 'Трассируем {name} заново…',
    'Re-tracing…': 'Трассируем заново…',
    'Checking…': 'Проверяется…',
    'A whole run of the lecture is checking this resumed run': 'Полный запуск лекции проверяет этот продолженный запуск',
    'Verified': 'Проверено',
    'A fresh whole run of the lecture gave this same trace': 'Новый полный запуск лекции дал ту же трассу',
    'Corrected': 'Исправлено',
    'The resumed run differed from a fresh whole run, whose trace this is: {line}': 'Продолженный запуск разошёлся с новым полным запуском; показана трасса полного: {line}',
    'The trace of the last version that ran to the end': 'Трасса последней версии, которая выполнилась до конца',
    'rank': 'ранг',
    'of {n} · [ and ] switch rank at this point': 'из {n} · [ и ] — другой ранг в этой же точке',
    'Rank {rank} failed': 'Ранг {rank} завершился с ошибкой',
    'Rank {rank} stopped after another rank failed': 'Ранг {rank} остановлен, потому что упал другой ранг',
    'Rank {rank} was stopped': 'Ранг {rank} был остановлен',
    'Rank {rank} left no steps': 'Ранг {rank} не оставил ни одного шага',
    'Rank {rank} hit its step limit': 'Ранг {rank} упёрся в предел числа шагов',
    'Rank {rank} timed out': 'Ранг {rank} превысил лимит времени',
    'Rank {rank} ended: {status}': 'Ранг {rank} завершился: {status}',
    'go to its last step': 'перейти к его последнему шагу',
    'did not reach this call': 'не дошёл до этого вызова',
    '{op} on every rank': '{op} на каждом ранге',
    'argument': 'аргумент',
    'before the call': 'до вызова',
    'after': 'после',
    'This step runs in the lecture\'s own process, not in a rank.': 'Этот шаг выполняется в процессе самой лекции, а не в одном из рангов.',
    'previous / next rank of a distributed program, at the same point': 'предыдущий / следующий ранг распределённой программы в той же точке',
    '{count} item': RU_ITEMS,
    '{count} items': RU_ITEMS,
    '{count} element': RU_ITEMS,
    '{count} elements': RU_ITEMS,
    '{count} field': { one: '{count} поле', few: '{count} поля', many: '{count} полей', other: '{count} поля' },
    '{count} fields': { one: '{count} поле', few: '{count} поля', many: '{count} полей', other: '{count} поля' },
    '{count} character': { one: '{count} символ', few: '{count} символа', many: '{count} символов', other: '{count} символа' },
    '{count} characters': { one: '{count} символ', few: '{count} символа', many: '{count} символов', other: '{count} символа' },
    '{count} byte': { one: '{count} байт', few: '{count} байта', many: '{count} байт', other: '{count} байта' },
    '{count} bytes': { one: '{count} байт', few: '{count} байта', many: '{count} байт', other: '{count} байта' },
    '{type} of {items} {open}…{close}': '{type}: {items} {open}…{close}',
    '{label} with {items}': '{label}: {items}',
    '… {n} more': '… ещё {n}',
    'first {n} slices shown': 'показаны первые срезы: {n}',
    'first {n} of {elements} (flattened)': 'первые {n}; всего {elements} (развёрнуто в одну строку)',
    'non-contiguous, stride ({stride})': 'не непрерывный, шаги (stride) ({stride})',
    'storage offset {n}': 'смещение в хранилище (storage offset) {n}',
    ' (repr failed: {error})': ' (repr не удался: {error})',
  },
  zh: {
    'Language': '语言',
    'All lectures (g)': '全部讲座 (g)',
    'Lectures': '讲座',
    'Contents': '目录',
    'Step back (h, ←)': '后退一步 (h, ←)',
    'Step back': '后退一步',
    'Step forward (l, →)': '前进一步 (l, →)',
    'Step forward': '前进一步',
    'Step over, backwards (k, shift+←)': '逐过程后退 (k, shift+←)',
    'Step over backwards': '逐过程后退',
    'Step over (j, shift+→)': '逐过程前进 (j, shift+→)',
    'Step over': '逐过程前进',
    'Step out of this function (u)': '跳出当前函数 (u)',
    'Step out': '跳出函数',
    'Raw': '代码',
    'Raw: show the code under the renderings (R)': '代码：在讲义文字下显示代码 (R)',
    'Reveal': '已执行',
    'Reveal: only the lines run so far (A)': '已执行：只显示已经运行过的行 (A)',
    'Keyboard shortcuts (?)': '快捷键 (?)',
    'Keyboard shortcuts': '快捷键',
    'Progress through the trace (click to jump)': '追踪进度（点击跳转）',
    'Call stack': '调用栈',
    'Inspected values': '观察的变量值',
    'Back to the list of lectures': '返回讲座列表',
    'Keys': '按键',
    'step forward': '前进一步',
    'step back': '后退一步',
    'step over: next line of this function (or its caller)': '逐过程：本函数（或调用者）的下一行',
    'step over backwards': '逐过程后退',
    'step out: back in the caller, after this call returns': '跳出：本次调用返回后回到调用者',
    'raw: show the code under the renderings': '代码：在讲义文字下显示代码',
    'reveal: show only the lines run so far': '已执行：只显示已经运行过的行',
    'open another lecture': '打开另一个讲座',
    'click a line number': '点击行号',
    'go to the step running it': '跳到执行该行的步骤',
    'close this help': '关闭帮助',
    'Not translated yet: shown in English.': '尚未翻译：以英文显示。',
    'The translation is out of date: shown in English.': '译文已过时：以英文显示。',
    'Navigation': '导航',
    'Loading {name}…': '正在加载 {name}…',
    'Cannot show the trace "{name}"': '无法显示追踪“{name}”',
    'The trace "{name}" is empty': '追踪“{name}”为空',
    'It records no steps to show{why}. Trace the lecture again.': '其中没有可显示的步骤{why}。请重新追踪该讲座。',
    'The lecture raised an error': '讲座运行时抛出了错误',
    'The run hit its step limit': '运行达到了步数上限',
    'The run timed out': '运行超时',
    'The run ended with status {status}': '运行以状态 {status} 结束',
    'show the error': '查看错误',
    'line {n}': '第 {n} 行',
    'step {n} of {total}': '第 {n} 步，共 {total} 步',
    '{where} (step {n})': '{where}（第 {n} 步）',
    'Viewing {where}. ': '正在查看 {where}。',
    'Back to the current step (Esc)': '回到当前步骤 (Esc)',
    'Line {n} never ran in this trace.': '第 {n} 行在本次追踪中从未执行。',
    'Already in the outermost call.': '已经在最外层调用中。',
    'No traces yet. Trace a lecture with {command}.': '还没有追踪。请用 {command} 追踪一个讲座。',
    '{n} steps': '{n} 步',
    'traced {when}': '追踪于 {when}',
    'Keys in a lecture: l / h step, j / k step over, u step out, R raw code, A reveal, e edit (under cs336-lectures serve; Ctrl+S saves and re-traces), g back here, ? help.': '讲座中的按键：l / h 单步，j / k 逐过程，u 跳出函数，R 代码，A 已执行，e 编辑（在 cs336-lectures serve 下；Ctrl+S 保存并重新追踪），g 回到这里，? 帮助。',
    'No inspected values in this frame yet. A "# @inspect x" comment on a line records x.': '此栈帧中还没有观察的变量值。在某行加上注释“# @inspect x”即可记录 x。',
    'shares storage with {names}': '与 {names} 共享存储',
    'Image unavailable': '图片不可用',
    'Open {where}': '打开 {where}',
    'Save': '保存',
    'Save and re-trace (Ctrl+S)': '保存并重新追踪 (Ctrl+S)',
    'Re-trace': '重新追踪',
    'Trace the lecture again without changing it': '不修改讲座，重新追踪一次',
    'Close': '关闭',
    'Close the editor (Escape)': '关闭编辑器 (Escape)',
    'Edit': '编辑',
    'Edit this lecture and re-trace it (e)': '编辑此讲座并重新追踪 (e)',
    'Show solution': '显示答案',
    'Hide solution': '隐藏答案',
    '(in a solution: show it to see this value)': '（在答案中：展开答案即可看到此值）',
    'edit the lecture under its code (with {command}, from the URL it printed)': '在代码下方编辑讲座（需运行 {command}，并打开它打印出的网址）',
    'in the editor: save and re-trace; Esc closes it': '在编辑器中：保存并重新追踪；Esc 关闭编辑器',
    'Width of the values panel (drag, or ← / →; double-click resets)': '变量面板的宽度（拖动，或用 ← / →；双击恢复默认）',
    'Drag to resize the values panel; double-click resets': '拖动以调整变量面板的宽度；双击恢复默认',
    'copy exact': '复制精确值',
    'copied': '已复制',
    'Copy {name} with every digit': '复制 {name} 的全部数位',
    '1 step': '1 步',
    'file fails now': '文件当前出错',
    'The file on disk fails to trace (this trace is the last good one): {error}': '磁盘上的文件追踪失败（这是最后一次成功的追踪）：{error}',
    'The file on disk fails to trace, and no run of it has written a trace yet: {error}': '磁盘上的文件追踪失败，而且还没有任何一次运行写出过追踪：{error}',
    'Editing needs the token the server printed at start-up: open the URL from the terminal where {command} runs, the one ending in ?token=…': '编辑需要服务器启动时打印的令牌：请在运行 {command} 的终端里打开以 ?token=… 结尾的那个网址',
    'traceback': '错误回溯',
    'Dismiss': '关闭提示',
    'the re-trace failed': '重新追踪失败',
    'Re-tracing {name} failed: {error}': '重新追踪 {name} 失败：{error}',
    '(the failed run cannot be opened: {error})': '（无法打开失败的运行：{error}）',
    'go to line {n}': '转到第 {n} 行',
    'Open the failed run at the step that failed': '在出错的步骤打开失败的运行',
    'edit line {n}': '编辑第 {n} 行',
    'Open the lecture in the editor at the failing line': '在编辑器中打开讲座并定位到出错的行',
    'last good trace': '最后一次成功的追踪',
    '{title} (failed run)': '{title}（失败的运行）',
    'Unsaved changes': '有未保存的修改',
    'Cannot edit {name}: {error}': '无法编辑 {name}：{error}',
    'No token: saving needs the URL the server printed': '没有令牌：保存需要打开服务器打印出的网址',
    'Unsaved changes: Ctrl+S saves, Escape again discards them': '有未保存的修改：Ctrl+S 保存，再按一次 Escape 放弃修改',
    'Saving…': '正在保存…',
    'Not saved: {error}': '未保存：{error}',
    'Saved; re-tracing…': '已保存，正在重新追踪…',
    'Re-traced': '已重新追踪',
    'Re-traced: {message}': '已重新追踪：{message}',
    'Re-trace failed: {error}': '重新追踪失败：{error}',
    'Re-trace failed (the last good trace is still shown): {error}': '重新追踪失败（仍显示最后一次成功的追踪）：{error}',
    '{name} cannot be edited here: start the server with its lecture file ({command})': '这里无法编辑 {name}：请用它的讲座文件启动服务器（{command}）',
    'Open a lecture to edit it': '请先打开一个讲座再编辑',
    'Cannot re-trace {name}: {error}': '无法重新追踪 {name}：{error}',
    'Re-tracing {name}…': '正在重新追踪 {name}…',
    'Re-tracing…': '正在重新追踪…',
    'Checking…': '核对中…',
    'A whole run of the lecture is checking this resumed run': '讲座的完整运行正在核对这次接续运行',
    'Verified': '已核实',
    'A fresh whole run of the lecture gave this same trace': '讲座重新完整运行得到了相同的追踪',
    'Corrected': '已更正',
    'The resumed run differed from a fresh whole run, whose trace this is: {line}': '接续运行与重新完整运行不同；这是完整运行的追踪：{line}',
    'The trace of the last version that ran to the end': '最后一个完整运行结束的版本的追踪',
    'rank': '进程',
    'of {n} · [ and ] switch rank at this point': '共 {n} 个 · 按 [ 和 ] 在此处切换进程',
    'Rank {rank} failed': '进程 {rank} 出错',
    'Rank {rank} stopped after another rank failed': '进程 {rank} 因另一个进程出错而停止',
    'Rank {rank} was stopped': '进程 {rank} 被终止',
    'Rank {rank} left no steps': '进程 {rank} 没有留下任何步骤',
    'Rank {rank} hit its step limit': '进程 {rank} 达到了步数上限',
    'Rank {rank} timed out': '进程 {rank} 超时',
    'Rank {rank} ended: {status}': '进程 {rank} 已结束：{status}',
    'go to its last step': '跳到它的最后一步',
    'did not reach this call': '没有执行到这次调用',
    '{op} on every rank': '每个进程上的 {op}',
    'argument': '参数',
    'before the call': '调用前',
    'after': '调用后',
    'This step runs in the lecture\'s own process, not in a rank.': '这一步运行在讲义自身的进程中，不属于任何分布式进程（rank）。',
    'previous / next rank of a distributed program, at the same point': '分布式程序的上一个 / 下一个进程（rank），停在同一位置',
    '{count} item': '{count} 项',
    '{count} items': '{count} 项',
    '{count} element': '{count} 个元素',
    '{count} elements': '{count} 个元素',
    '{count} field': '{count} 个字段',
    '{count} fields': '{count} 个字段',
    '{count} character': '{count} 个字符',
    '{count} characters': '{count} 个字符',
    '{count} byte': '{count} 字节',
    '{count} bytes': '{count} 字节',
    '{type} of {items} {open}…{close}': '{type}，{items} {open}…{close}',
    '{label} with {items}': '{label}，{items}',
    '… {n} more': '… 还有 {n} 项',
    'first {n} slices shown': '仅显示前 {n} 个切片',
    'first {n} of {elements} (flattened)': '前 {n} 个，共 {elements}（展平）',
    'non-contiguous, stride ({stride})': '非连续，步长 (stride) ({stride})',
    'storage offset {n}': '存储偏移 (storage offset) {n}',
    ' (repr failed: {error})': '（repr 失败：{error}）',
  },
};

let current = initialLanguage();
const listeners = [];
const pluralRules = new Map(); // language -> its Intl.PluralRules, made once

function initialLanguage() {
  const asked = new URLSearchParams(location.search).get('lang');
  if (asked in LANGUAGES) return asked;
  let stored = null;
  try {
    stored = localStorage.getItem(STORAGE_KEY);
  } catch {
    // Storage refused (a private window, a file: page): the choice just is not remembered.
  }
  return stored in LANGUAGES ? stored : 'en';
}

/** The chosen language's code: 'en', 'ru' or 'zh'. */
export function language() {
  return current;
}

/** t('Step back') -> the chosen language's wording; t('line {n}', { n: 3 }) fills fields. */
export function t(english, fields = {}) {
  const wording = (STRINGS[current] && STRINGS[current][english]) || english;
  return fillFields(typeof wording === 'string' ? wording : english, fields);
}

/** A count with its noun: tCount(2500, '{count} item', '{count} items') -> "2,500 items", in
    Russian "2,500 элементов". A catalog entry for a count holds the language's plural forms,
    chosen by Intl.PluralRules ('one', 'few', 'many', 'other'). */
export function tCount(count, one, many) {
  const english = count === 1 ? one : many;
  return fillFields(pluralForm(STRINGS[current] && STRINGS[current][english], count) || english, { count: groupDigits(count) });
}

/** The form of a catalog entry for `count` in the chosen language: the entry itself when it is
    one string, its plural form when it holds several; null for no entry. */
export function pluralForm(entry, count) {
  if (typeof entry === 'string') return entry;
  if (!entry || typeof entry !== 'object') return null;
  if (!pluralRules.has(current)) pluralRules.set(current, new Intl.PluralRules(current));
  return entry[pluralRules.get(current).select(Number(count))] || entry.other || null;
}

/** fillFields('line {n}', { n: 3 }) -> "line 3"; a field not given stays as {name}. */
export function fillFields(wording, fields) {
  return wording.replace(/\{(\w+)\}/g, (whole, name) => (Object.hasOwn(fields, name) ? String(fields[name]) : whole));
}

/** Choose `code`: remember it, put it in the URL (?lang=, absent for English), tell the listeners. */
export function setLanguage(code) {
  if (!(code in LANGUAGES) || code === current) return;
  current = code;
  try {
    localStorage.setItem(STORAGE_KEY, code);
  } catch {
    // See initialLanguage.
  }
  const url = new URL(location.href);
  if (code === 'en') url.searchParams.delete('lang');
  else url.searchParams.set('lang', code);
  history.replaceState(history.state, '', url);
  translatePage();
  for (const listener of listeners) listener(code);
}

/** Call `listener(code)` after each change of language. */
export function onLanguageChange(listener) {
  listeners.push(listener);
}

/** A marked element's English: its text, with each child marked data-i18n-field="name" (a
    <code> inside a sentence, say) written as {name}. */
function englishOf(node) {
  return [...node.childNodes].map((child) => (child.dataset && child.dataset.i18nField ? `{${child.dataset.i18nField}}` : child.textContent)).join('');
}

/** Put `wording` in `node`, each {name} replaced by the node's own child of that field, so the
    child (and its styling) moves to where the language puts it in the sentence. */
function fill(node, wording) {
  const fields = new Map([...node.children].filter((child) => child.dataset.i18nField).map((child) => [child.dataset.i18nField, child]));
  if (!fields.size) {
    node.textContent = wording;
    return;
  }
  node.replaceChildren(...wording.split(/\{(\w+)\}/).map((part, i) => (i % 2 ? fields.get(part) || `{${part}}` : part)));
}

/** Translate the page's static strings: elements marked data-i18n (their text, fields kept)
    and data-i18n-attrs="title aria-label" (those attributes). The English is kept on the element. */
export function translatePage(root = document) {
  document.documentElement.lang = current;
  const marked = (selector) => [...(root.matches && root.matches(selector) ? [root] : []), ...root.querySelectorAll(selector)];
  for (const node of marked('[data-i18n]')) {
    if (node.dataset.i18nEnglish === undefined) node.dataset.i18nEnglish = englishOf(node);
    fill(node, t(node.dataset.i18nEnglish));
  }
  for (const node of marked('[data-i18n-attrs]')) {
    for (const attribute of node.dataset.i18nAttrs.split(/\s+/).filter(Boolean)) {
      const key = `i18nEnglish${attribute.replace(/(^|-)(\w)/g, (_, __, c) => c.toUpperCase())}`;
      if (node.dataset[key] === undefined) node.dataset[key] = node.getAttribute(attribute) || '';
      node.setAttribute(attribute, t(node.dataset[key]));
    }
  }
}

/** Mark an element built once (a button) for translatePage, translate it now and on every change. */
export function translatable(node) {
  translatePage(node);
  onLanguageChange(() => translatePage(node));
  return node;
}

/** A <select> offering every language, showing and changing the chosen one. */
export function installLanguageSwitch(select) {
  select.replaceChildren(...Object.entries(LANGUAGES).map(([code, name]) => new Option(name, code, false, code === current)));
  select.value = current;
  select.addEventListener('change', () => setLanguage(select.value));
  onLanguageChange((code) => {
    select.value = code;
  });
}

/** The chosen language's version of a markdown rendering: {html, headings, lang, fallback},
    fallback being null, 'missing' or 'stale' (then html and headings are the English). */
export function localized(rendering) {
  const english = { html: rendering.html, headings: rendering.headings || [], lang: 'en', fallback: null };
  if (current === 'en') return english;
  const translation = rendering.translations && rendering.translations[current];
  if (translation && typeof translation.html === 'string') {
    return { html: translation.html, headings: translation.headings || [], lang: current, fallback: null };
  }
  const why = rendering.untranslated && rendering.untranslated[current];
  return { ...english, fallback: why === 'stale' || why === 'missing' ? why : null };
}

/** The text of a heading of the contents in the chosen language (English when not translated). */
export function headingText(heading) {
  return (heading.texts && heading.texts[current]) || heading.text;
}

/** What the fallback marker says: why a string shows in English. */
export function fallbackReason(fallback) {
  return fallback === 'stale' ? t('The translation is out of date: shown in English.') : t('Not translated yet: shown in English.');
}
