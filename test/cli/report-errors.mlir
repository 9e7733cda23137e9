// `schedc report` with bad input: one line that says what is wrong (with line:col for broken
// JSON), exit code 1, and no page written.
// RUN: not schedc report %t.missing.json -o %t.html 2>&1 | filecheck %s --check-prefix=MISSING
// RUN: printf '{\n  "functions": {,\n}\n' > %t.bad.json
// RUN: not schedc report %t.bad.json -o %t.html 2>&1 | filecheck %s --check-prefix=BROKEN
// RUN: printf '[1, 2]\n' > %t.list.json
// RUN: not schedc report %t.list.json -o %t.html 2>&1 | filecheck %s --check-prefix=NOTREPORT
// RUN: printf '{"functions": {}}\n' > %t.empty.json
// RUN: not schedc report %t.empty.json -o %t.txt 2>&1 | filecheck %s --check-prefix=SUFFIX
// RUN: not ls %t.html %t.txt

// MISSING: schedc: error: {{.*}}.missing.json: no such file
// MISSING-NOT: Traceback
// BROKEN: schedc: error: {{.*}}.bad.json:2:17: not valid JSON: Expecting property name enclosed in double quotes
// BROKEN-NOT: Traceback
// NOTREPORT: schedc: error: {{.*}}.list.json: not a schedc report (no 'functions' object)
// NOTREPORT-NOT: Traceback
// SUFFIX: schedc: error: -o {{.*}}.txt: the page is HTML; name it .html
// SUFFIX-NOT: Traceback
