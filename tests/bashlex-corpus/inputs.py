# Corpus inputs for generate.py. Realistic agent commands plus adversarial cases.
BASE = [
    'ls', 'ls -la', 'pwd', 'cd /workspace && ls', 'echo a; echo b', 'echo a\necho b', 'ls\n\n', 'echo a\n\necho b',
    'for i in 1 2; do\n echo $i\ndone', 'echo "a\nb"', 'echo a \\\n  b', 'a=(1 2 3)\necho ${a[0]}',
    'echo a && echo b\necho c', 'cat <<EOF\nx\nEOF\necho after', 'echo a # comment\necho b', 'if true; then echo y; fi\nls',
    "git commit -m 'x'\ngit push", 'find /w -maxdepth 0 -exec echo {} \\;', 'find . -name "*.py" -exec grep -l foo {} \\;',
    'find . -type f -exec rm {} \\; && echo done', 'echo a \\| b', 'echo a\\&b', 'echo \\> x', 'echo \\<x', "echo '\\;'",
    'echo "\\;"', 'echo $(echo \\;)', 'echo `echo \\;`', 'ls \\;\nls', 'echo \\\\;', 'echo a\\;b\\;c',
    'python3 -c "print(1)"', "python3 -c 'import sys; print(sys.version)'", 'pip install -r requirements.txt',
    'git status', 'git log --oneline | head -5', 'git diff HEAD~1 -- src/ | grep -n foo', 'grep -rn "TODO" . | wc -l',
    'npm test 2>&1 | tail -20', 'make -j4 > build.log 2>&1', 'cargo build 2>&1 | tee out.txt', 'cd src && python -m pytest -x -q',
    'export PATH=$PATH:/usr/local/bin', 'FOO=bar python x.py', 'A=1 B=2 env', 'x=$(ls | wc -l); echo $x',
    'echo ${HOME}', 'echo ${var:-default}', 'echo "${arr[@]}"', 'echo $((1 + 2))', 'echo $[1+2]', 'let x=1+2',
    'echo $(( x * 2 ))', '((i++))', '(( i = 1 ))', 'for ((i=0;i<3;i++)); do echo $i; done', '[[ -f x ]] && echo yes',
    '[ -f x ] && echo yes', 'test -d dir || mkdir dir', 'if [ -f a ]; then cat a; else echo none; fi',
    'if [ -f a ]; then\n  cat a\nelif [ -f b ]; then\n  cat b\nelse\n  echo none\nfi',
    'while read line; do echo "$line"; done < file.txt', 'while true\ndo echo; done', 'while true; do sleep 1; done',
    'until false; do break; done', 'until [ $n -ge 5 ]\ndo\n  n=$((n+1))\ndone', 'case $x in a) echo a;; esac',
    'case "$1" in\n  start) run ;;\n  *) usage ;;\nesac', 'select x in a b; do echo $x; done', 'time ls', 'time -p ls',
    'coproc cat', 'function f { echo hi; }', 'function f() { echo hi; }', 'f() { echo hi; }\nf', 'f() { echo hi; }; f',
    'f()\n{\n  echo hi\n}', 'function g { echo $1; } > out.txt', '{ echo a; echo b; } > out.txt', '{ echo a; echo b; }',
    '( cd /tmp && ls )', '(cd /tmp; ls) | wc -l', 'echo $( (cd /tmp; ls) )', 'diff <(ls a) <(ls b)', 'cat <(echo hi)',
    'tee >(wc -l) < file', 'echo <(true', 'echo "unterminated', "echo 'unterminated", 'echo `unterminated', 'echo $(unterminated',
    'echo ${unterminated', 'echo )', 'echo (', 'echo a |', 'echo a &&', '| echo', '&& echo', ';', ';;', 'echo a;;', '&',
    'echo a &', 'sleep 10 &\necho started', 'nohup python server.py > server.log 2>&1 &', 'python app.py &> log.txt &',
    'ls 2>/dev/null', 'ls 1>&2', 'ls >&2', 'exec 3>&1', 'exec 3<&-', 'cat <&3', 'ls &>> log', 'cmd 2>&1 >/dev/null',
    'echo hi >| file', 'cat <> file', 'cat <<< "here string"', 'cat <<<$var', 'tr a-z A-Z <<< hello',
    'cat <<EOF\nhello\nEOF', 'cat << EOF > file.txt\nline1\nline2\nEOF', "cat <<'EOF'\nx $y\nEOF", 'cat <<"EOF"\nx\nEOF',
    'cat <<-EOF\n\tindented\n\tEOF', 'cat <<EOF | grep x\nx1\ny\nEOF', 'cat <<EOF\nno end', 'cat <<EOF; echo after\nbody\nEOF',
    'cat <<A <<B\na\nA\nb\nB', 'cat <<EOF > a.py\nimport os\nprint(os.getcwd())\nEOF\npython a.py',
    "cat > test.py << 'EOF'\ndef f():\n    return 1\nEOF", 'python3 <<EOF\nprint("a; b")\nEOF',
    'cat <<EOF\n$(echo sub)\nEOF', 'cat <<EOF\nfind . -exec x \\;\nEOF', 'for f in *.txt; do cat <<EOF\n$f\nEOF\ndone',
    'echo $(cat <<EOF\nx\nEOF\n)', 'echo "a" \'b\' c', 'echo "it\'s"', "echo 'say \"hi\"'", 'echo "a $(date) b"',
    'echo "$(echo "nested")"', 'echo $(echo $(echo deep))', 'echo `echo \\`inner\\``', 'echo ``', 'echo ` `', 'echo `#c`',
    'echo $( )', 'echo $(\n)', 'echo $(# comment\n)', 'echo $(ls\n)', 'echo $(a && b)', 'echo $(a; b)', 'echo $(a;)',
    'echo $(a | b)', 'echo $(a || b; c)', 'echo $(a; b && c)', 'echo $(a & b)', 'echo $(! a)', 'echo $(if true; then echo x; fi)',
    'echo $(case x in a) echo;; esac)', 'echo $(for i in 1; do echo; done)', "echo a'$(ls)'", "echo a'$((1))'", "echo '$((1))'",
    "'$(ls)'", 'echo "$((1))"', 'echo $"localized"', "echo $'tab\\t'", 'echo $$', 'echo $?', 'echo $#', 'echo $@', 'echo $1$2',
    'echo ~', 'echo ~/x', 'echo a~b', 'ls ~user/dir', 'x=~/a:~/b', 'echo \\$HOME', 'echo $\\\n', 'echo 1\\\n', 'echo a\\\n',
    'echo a \\\n| grep a', 'ls \\\n  -la \\\n  /tmp', '\\\nls', 'echo a\\', 'echo \\', '\\', '\\\\', 'echo # only comment',
    '# just a comment', '#!/bin/bash\necho hi', 'echo a # c1\n# c2\necho b', 'echo a#b', 'echo a #b\n', '   ', '\n', '\t\n',
    '\n\necho a\necho b', '  echo a  \n  echo b  ', 'echo a\n\n\n', 'echo a\r\necho b', 'echo a\recho b', 'ls\t-la',
    'echo héllo wörld', 'echo "日本語"', 'echo 😀 \\; x', 'grep -r "ünïcödé" .', 'mkdir -p a/b/c && cd a/b/c && touch x',
    'sed -i "s/foo/bar/g" file.txt', "sed -i 's/a\\;b/c/' f", "awk '{print $1}' file | sort | uniq -c",
    'awk -F: \'{ if ($3 > 1000) print $1 }\' /etc/passwd', 'xargs -I{} sh -c "echo {}; echo done"', 'find . | xargs rm',
    'docker run --rm -it ubuntu bash -c "ls; pwd"', 'ssh host "cd /; ls"', 'curl -s http://x | python3 -m json.tool',
    'echo {a,b,c}', 'echo {1..10}', 'touch file{1,2}.txt', 'echo a{', 'echo }', 'echo {', '{', '}', '{ ls', '{ ls; }',
    '{ls;}', 'if', 'then', 'fi', 'done', 'do', 'esac', 'in', '!', '! ls', '! ;', '!\n', '! true && echo', 'if ! true; then :; fi',
    'echo if then fi', 'echo for while', 'for x; do echo $x; done', 'for x\ndo\necho $x\ndone', 'for x in; do echo; done',
    'for x in a b\ndo echo $x; done', 'for x in a b c; { echo $x; }', 'for x in $(seq 3); do echo $x; done',
    'for f in `ls`; do echo $f; done', 'for i in 1 2 3\ndo\n  echo $i\ndone\necho end', 'if true\nthen\necho a\nfi',
    'if true; then echo a; fi > out', 'if true; then echo a; fi; echo b', 'if true; then\n  echo a\nfi\n',
    'while true\n do :; done', 'while :; do :; done &', 'x=1', 'x=1; y=2', 'x+=1', 'arr=(a b c)', 'declare -a arr=(1 2)',
    'local x=1', 'export A="b c"', 'a=b c=d', '1=2', '_x=1', 'x=`date`', 'x="$(date)"', 'echo x=1', 'a[0]=1',
    'echo a > b > c', 'echo > ', '> file', '< file cat', '2>&1', 'echo 2>', 'echo >&', 'echo >&-', 'cat 0<file',
    '{fd}>file echo', 'exec {fd}>&-', 'echo a 10>x', 'echo 12345', 'echo a; ', 'echo a ;  # trailing comment\necho b',
    'echo a;\necho b', 'echo a &&\necho b', 'echo a ||\n echo b', 'echo a |\n grep a', 'echo a\n&& echo b',
    'ls | grep x && echo found || echo missing', 'ls |& grep x', 'a && b || c; d & e', 'true && { echo a; echo b; }',
    'python - <<PY\nimport sys\nprint(sys.argv)\nPY', 'git commit -m "fix: handle \\"quotes\\""', 'git commit -am "msg; with semicolon"',
    "git commit -m 'multi\nline message'", 'git commit -m "line1\nline2"', 'echo "a\\"b"', "echo 'a\\'b'", 'echo "a\\\\"',
    'echo a\\ b', 'echo "\\$x"', 'ls "dir with spaces"/', 'cd "$(dirname "$0")"', 'echo "$HOME"/x', 'printf "%s\\n" a b',
    "printf '%s;%s\\n' a b", 'echo -e "a\\tb"', 'echo $(( (1+2) * 3 ))', 'echo $((', 'echo ${#arr[@]}', 'echo ${x/a/b}',
    'echo ${x%%.*}', 'echo "${x#*/}"', "echo ${x:-'}'}", 'echo ${x:-"}"}', 'echo ${!prefix*}', 'echo $x$y${z}',
    'ls -la | awk \'{print $9}\' | grep -v "^\\." | head', 'ps aux | grep [p]ython', 'kill -9 $(pgrep -f server)',
    'pkill -f "python app.py"; sleep 1', 'sleep 5; echo done', 'timeout 10 python x.py', 'watch -n1 ls',
    'cat file | while read l; do echo $l; done', 'exit 0', 'exit', 'return 1', 'source venv/bin/activate',
    '. ./env.sh', 'alias ll="ls -la"', 'set -e; set -o pipefail', 'trap "echo bye" EXIT', 'eval "echo hi"',
    'bash -c "echo a\necho b"', "bash -c 'for i in 1 2; do echo $i; done'", 'sh -c "ls \\; pwd"',
    'echo a\\\necho b', 'echo a\n \necho b', 'echo a\n#\necho b', 'x\n#c\ny', 'echo ";"', "echo ';'", 'echo \\"',
    "echo \\'", 'echo "', "echo '", 'echo `', 'echo $(', 'echo ${', 'echo "$(', 'echo "`"', 'echo \'"\'', 'echo "\'"',
    'echo a"b"c', "echo a'b'c", 'echo "a"b\'c\'', '"quoted command"', "'single'", '$(ls)', '`ls`', '$(ls) arg',
    'echo "x" > "out file.txt"', 'echo hi > \\;', 'echo hi > a\\;b', 'echo hi > "\\;"', 'ls > x \\; y',
    'find . -exec grep -l "a;b" {} \\;', 'find . -name \\*.py -exec wc -l {} +', 'find . -exec sh -c \'echo {}\' \\;',
    'find . \\( -name a -o -name b \\) -print', 'echo \\(a\\)', 'echo a\\|b\\&c\\>d\\<e', "echo 'a\\|b'", 'echo "a\\|b"',
    'echo $(echo a\\;b)', 'echo `echo a\\|b`', 'X=a\\;b env', 'echo x\\;y z\\;w', 'echo\t\\;', 'echo \\;\\;',
    'find . -exec echo {} \\; | head', 'find . -exec echo {} \\; > out', 'cat <<EOF\nx\\;\nEOF\necho \\;',
    '{ find . -exec x \\; ; } && echo \\;', 'if true; then find . -exec x \\; ; fi', 'f() { find . -exec x \\; ; }',
    'ls; find . -exec x \\;', 'ls && find . -exec x \\;', 'ls | find . -exec x \\;', '(find . -exec x \\;)',
    'cat <<EOF | find . -exec x \\;\nbody\nEOF', 'echo "$(find . -exec x \\;)"', 'x=1 find . -exec x \\;',
]

EXTRA = []
# agent-style multi-line scripts
for sep in ['\n', '; ', ' && ', ' || ', ' | ', ' & ', '\n\n', ' ;\n', '\n# note\n']:
    for a, b in [('ls', 'pwd'), ('cd /tmp', 'ls -la'), ('echo "a;b"', "echo 'c|d'"), ('find . -exec x \\;', 'echo \\>')]:
        EXTRA.append(a + sep + b)
# heredoc variants
for delim in ['EOF', 'END', "'EOF'", '"EOF"', 'E\\OF', 'PY']:
    EXTRA.append(f'cat <<{delim}\nline $x\n{delim}')
    EXTRA.append(f'cat <<-{delim}\n\tline\n\t{delim}\necho next')
# compound commands followed by another line
for c in ['{ ls; }', '(ls)', 'if true; then :; fi', 'for i in 1; do :; done', 'while false; do :; done', 'f() { :; }',
          'until true; do :; done', 'function g { :; }']:
    EXTRA.append(c)
    EXTRA.append(c + '\nls')
    EXTRA.append(c + ' > out.txt')
    EXTRA.append(c + ' && echo ok')
    EXTRA.append('echo pre; ' + c)

INPUTS = BASE + EXTRA
