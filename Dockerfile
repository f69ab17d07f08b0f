# The instructor's grading image: the grader runs as root, each learner's code under a uid of its own,
# with no network and no way to read the grader, the references or another learner's folder.
#
#   docker build -t tinyattn-grader .
#   docker run --rm --network none -v "$PWD/submissions:/submissions:ro" -v "$PWD/out:/out" \
#       -e TINYATTN_GRADE_SEED tinyattn-grader --csv /out/grades.csv --json /out/grades.json --jobs 2
#
# (Docker's default seccomp profile forbids the user namespaces of the Linux sandbox, so inside the
# container the grader uses --isolation user: the container is the wall, the user id the door.)
FROM python:3.11-slim
WORKDIR /src
COPY pyproject.toml README.md ./
COPY tinyattn ./tinyattn
RUN pip install --no-cache-dir . \
 && chmod -R go-rwx "$(python -c 'import os, tinyattn; print(os.path.dirname(tinyattn.__file__))')" \
 && cd / && rm -rf /src
WORKDIR /root
# the submissions are copied where only root can read them: the grader reads every source before any
# learner code runs, and sends each learner's code to its own process over a pipe
ENTRYPOINT ["sh", "-c", "cp -r /submissions /root/submissions && chmod -R go-rwx /root/submissions && exec tinyattn grade --batch /root/submissions --isolation user \"$@\"", "tinyattn-grade"]
