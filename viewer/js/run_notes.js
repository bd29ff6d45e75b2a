/* What the server says about a run ("re-ran `bpe` (0.21 s); 27 sections reused", why a whole
   run was needed), in the reader's language.

   The server sends each such line as a note: an English template and its fields, a field
   being a value or another note (cs336_lectures/runtime/i18n/run_messages.py). This table translates the
   templates; a template missing from it shows in English. A count arrives as the note
   "{count} section" or "{count} sections", English's plural already chosen: an entry here may
   be an object of plural forms, picked for the count by the language's own rules
   (i18n.js's pluralForm: Russian has three). */

import { fillFields, language, pluralForm } from './i18n.js';

const RU_SECTIONS = { one: '{count} раздел', few: '{count} раздела', many: '{count} разделов', other: '{count} раздела' };
const RU_STEPS = { one: '{count} шаг', few: '{count} шага', many: '{count} шагов', other: '{count} шага' };

const NOTES = {
  ru: {
    're-ran `{section}` and the {after} after it ({seconds} s); {reused} reused':
      '`{section}` и {after} после него выполнены заново ({seconds} с); из прошлого запуска взято: {reused}',
    're-ran `{section}` ({seconds} s); {reused} reused': '`{section}` выполнен заново ({seconds} с); из прошлого запуска взято: {reused}',
    're-ran the whole lecture ({seconds} s): {reason}': 'лекция выполнена заново целиком ({seconds} с): {reason}',
    're-ran `{section}` ({seconds} s); running the {after} after it…': '`{section}` выполнен заново ({seconds} с); {after} после него ещё в работе…',
    're-ran `{section}` ({seconds} s); finishing…': '`{section}` выполнен заново ({seconds} с); завершение…',
    'traced {steps} in {seconds} s': 'трасса готова: {steps} за {seconds} с',
    '{count} section': RU_SECTIONS,
    '{count} sections': RU_SECTIONS,
    '{count} step': RU_STEPS,
    '{count} steps': RU_STEPS,
    'no checkpoint to resume from': 'нет контрольной точки, с которой можно продолжить',
    'the first run of the lecture': 'это первый запуск лекции',
    'the previous run failed': 'предыдущий запуск завершился ошибкой',
    'a re-trace was asked for': 'запрошена повторная трассировка',
    'corrected: the resumed run differed at step {step}':
      'исправлено: продолженный запуск разошёлся с полным на шаге {step}',
    'corrected: the resumed run differed from a whole run': 'исправлено: продолженный запуск разошёлся с полным',
    'checking a resumed run against a whole one': 'продолженный запуск сверяется с полным',
    'the last resumed run was corrected': 'последний продолженный запуск пришлось исправить',
    '{module} changed': 'изменился {module}',
    'the {language} translation changed': 'изменился перевод ({language})',
    'the lecture does not parse': 'в лекции синтаксическая ошибка',
    'the edit changes code that ran before the first section': 'правка затрагивает код, выполненный до первого раздела',
    'the checkpoint before `{section}` was gone': 'контрольной точки перед `{section}` больше нет',
    'no checkpoint: {reason}': 'нет контрольной точки: {reason}',
    '{reason}, before `{section}`': '{reason}, перед `{section}`',
    '{entry}() calls no top-level function of the lecture': '{entry}() не вызывает ни одной функции верхнего уровня лекции',
    'no checkpoint was kept': 'ни одна контрольная точка не сохранилась',
    'the lecture has no {entry}() calling sections': 'в лекции нет {entry}(), вызывающей разделы',
    'the lecture could not be parsed': 'лекцию не удалось разобрать',
    'CUDA was initialised (a process cannot fork after that)': 'инициализирована CUDA (после этого процесс нельзя копировать через fork)',
    'the lecture started a thread ({name})': 'лекция запустила поток ({name})',
    "torch's thread pool is running (parallel operations cannot be forked; install LLVM's OpenMP: apt-get install libomp5)":
      'работает пул потоков torch (параллельные операции не переживают fork; установите OpenMP от LLVM: apt-get install libomp5)',
    '{run}; resumed early: {reason}': '{run}; продолжено раньше правки: {reason}',
    '`{name}` changed, and code that ran earlier refers to it': '`{name}` изменилась, а код, выполненный раньше, ссылается на неё',
    'code that ran earlier looks names up at run time (`{name}`)': 'код, выполненный раньше, ищет имена во время работы (`{name}`)',
    'the lecture wrote {path}': 'лекция записала {path}',
    'the lecture ran a program ({name})': 'лекция запустила программу ({name})',
    'a process the lecture started wrote or ran {what}': 'процесс, запущенный лекцией, записал или запустил {what}',
    'the lecture looks at its own process (`{name}`), which only a new process shows as `cs336-lectures trace` would':
      'лекция смотрит на собственный процесс (`{name}`), а его таким, как при `cs336-lectures trace`, покажет только новый процесс',
    'the lecture did something the kernel cannot follow ({event})': 'лекция сделала то, что ядро не может отследить ({event})',
    'this platform cannot list child processes': 'на этой платформе нельзя узнать дочерние процессы',
    'the lecture left a child process running': 'лекция оставила работающий дочерний процесс',
    'the imports changed': 'изменились импорты',
    'class {name} changed (classes are defined at import)': 'изменился класс {name} (классы определяются при импорте)',
    'module-level code changed (line {line})': 'изменился код на уровне модуля (строка {line})',
    '{entry}() changed': 'изменилась {entry}()',
    '`{name}` is defined twice': '`{name}` определена дважды',
    '`{name}` is decorated (its decorator runs at import)': 'у `{name}` есть декоратор (он выполняется при импорте)',
    'the parameters of `{name}` changed (defaults are evaluated at import)':
      'изменились параметры `{name}` (значения по умолчанию вычисляются при импорте)',
    'the new function `{name}` has defaults that are not literals': 'у новой функции `{name}` значения по умолчанию — не литералы',
  },
  zh: {
    're-ran `{section}` and the {after} after it ({seconds} s); {reused} reused':
      '重新运行了 `{section}` 及其后的 {after}（{seconds} 秒）；沿用了 {reused}',
    're-ran `{section}` ({seconds} s); {reused} reused': '重新运行了 `{section}`（{seconds} 秒）；沿用了 {reused}',
    're-ran the whole lecture ({seconds} s): {reason}': '重新运行了整个讲座（{seconds} 秒）：{reason}',
    're-ran `{section}` ({seconds} s); running the {after} after it…': '重新运行了 `{section}`（{seconds} 秒）；正在运行其后的 {after}…',
    're-ran `{section}` ({seconds} s); finishing…': '重新运行了 `{section}`（{seconds} 秒）；即将完成…',
    'traced {steps} in {seconds} s': '追踪完成：{steps}，用时 {seconds} 秒',
    '{count} section': '{count} 个小节',
    '{count} sections': '{count} 个小节',
    '{count} step': '{count} 步',
    '{count} steps': '{count} 步',
    'no checkpoint to resume from': '没有可以接着运行的检查点',
    'the first run of the lecture': '这是讲座的第一次运行',
    'the previous run failed': '上一次运行失败了',
    'a re-trace was asked for': '收到了重新追踪的请求',
    'corrected: the resumed run differed at step {step}': '已更正：接续运行在第 {step} 步与完整运行不同',
    'corrected: the resumed run differed from a whole run': '已更正：接续运行与完整运行不同',
    'checking a resumed run against a whole one': '正在用完整运行核对接续运行',
    'the last resumed run was corrected': '上一次接续运行已被更正',
    '{module} changed': '{module} 有改动',
    'the {language} translation changed': '{language} 翻译有改动',
    'the lecture does not parse': '讲座代码有语法错误',
    'the edit changes code that ran before the first section': '改动涉及第一个小节之前运行的代码',
    'the checkpoint before `{section}` was gone': '`{section}` 之前的检查点已不存在',
    'no checkpoint: {reason}': '没有检查点：{reason}',
    '{reason}, before `{section}`': '{reason}，在 `{section}` 之前',
    '{entry}() calls no top-level function of the lecture': '{entry}() 没有调用讲座中的任何顶层函数',
    'no checkpoint was kept': '没有保留任何检查点',
    'the lecture has no {entry}() calling sections': '讲座中没有调用各小节的 {entry}()',
    'the lecture could not be parsed': '无法解析讲座代码',
    'CUDA was initialised (a process cannot fork after that)': 'CUDA 已初始化（此后进程无法 fork）',
    'the lecture started a thread ({name})': '讲座启动了一个线程（{name}）',
    "torch's thread pool is running (parallel operations cannot be forked; install LLVM's OpenMP: apt-get install libomp5)":
      'torch 的线程池正在运行（并行运算无法 fork；请安装 LLVM 的 OpenMP：apt-get install libomp5）',
    '{run}; resumed early: {reason}': '{run}；从改动之前的位置接着运行：{reason}',
    '`{name}` changed, and code that ran earlier refers to it': '`{name}` 有改动，而之前运行的代码引用了它',
    'code that ran earlier looks names up at run time (`{name}`)': '之前运行的代码在运行时查找名字（`{name}`）',
    'the lecture wrote {path}': '讲座写入了 {path}',
    'the lecture ran a program ({name})': '讲座运行了一个程序（{name}）',
    'a process the lecture started wrote or ran {what}': '讲座启动的进程写入或运行了 {what}',
    'the lecture looks at its own process (`{name}`), which only a new process shows as `cs336-lectures trace` would':
      '讲座查看了自身的进程（`{name}`），只有新进程才能像 `cs336-lectures trace` 那样呈现它',
    'the lecture did something the kernel cannot follow ({event})': '讲座做了内核无法跟踪的操作（{event}）',
    'this platform cannot list child processes': '此平台无法列出子进程',
    'the lecture left a child process running': '讲座留下了一个仍在运行的子进程',
    'the imports changed': 'import 语句有改动',
    'class {name} changed (classes are defined at import)': '类 {name} 有改动（类在导入时定义）',
    'module-level code changed (line {line})': '模块级代码有改动（第 {line} 行）',
    '{entry}() changed': '{entry}() 有改动',
    '`{name}` is defined twice': '`{name}` 被定义了两次',
    '`{name}` is decorated (its decorator runs at import)': '`{name}` 带有装饰器（装饰器在导入时运行）',
    'the parameters of `{name}` changed (defaults are evaluated at import)': '`{name}` 的参数有改动（默认值在导入时求值）',
    'the new function `{name}` has defaults that are not literals': '新函数 `{name}` 的默认值不是字面量',
  },
};

/** A note in the chosen language, e.g. say({template: '{count} sections', fields: {count: 3}})
    -> "3 раздела" in Russian; '' for anything that is not a note. */
export function say(note) {
  if (!note || typeof note !== 'object' || typeof note.template !== 'string') return '';
  const fields = {};
  for (const [name, value] of Object.entries(note.fields || {})) {
    fields[name] = value && typeof value === 'object' ? say(value) : String(value);
  }
  const wording = pluralForm(NOTES[language()] && NOTES[language()][note.template], fields.count) || note.template;
  return fillFields(wording, fields);
}

/** What an event of the server says about its run: its note in the chosen language, else its
    English message. */
export function runNote(event) {
  return say(event.note) || String(event.message || '');
}
