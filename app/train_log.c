/* train_log.c — the training log (see train_log.h). */
#include "train_log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/input_file.h"
#include "../common/util.h"
#include "cli.h"
#include "exit_status.h"

static const char LOG_HEADER[] =
    "event,step,epoch,loss,lr,tokens_per_s,grad_norm,dev_loss,dev_bleu,dev_chrf,seconds,loss_smooth\n";

/* May this run write its log over the regular file open at `fd`?  Unlike
 * the other outputs, the log is written in place, line by line, so it is
 * checked here: a file that is not a training log (a model or a vocabulary
 * named as the log by mistake) never, whatever --overwrite says.  An
 * earlier run's log may go: a new run gets here only when that run's
 * checkpoint and model are not there (train.c's start() has refused
 * them), as after a run killed before its first checkpoint.  0, or
 * EXIT_USAGE with the message printed. */
static int check_log(const Run *r, int fd, const struct stat *sb)
{
    const char *path = r->cfg.train.log_path;
    if (sb->st_size == 0) return 0;
    char head[sizeof LOG_HEADER];
    ssize_t got = pread(fd, head, sizeof head - 1, 0);
    bool a_log = got == (ssize_t)sizeof head - 1 && memcmp(head, LOG_HEADER, sizeof head - 1) == 0;
    if (!a_log) {
        cli_say("train", "%s (the log) exists and is not a training log: name another file "
                         "for train.log (or train into a new file with --out FILE)", path);
        return EXIT_USAGE;
    }
    /* A new run empties a log it finds, an earlier run's that died before
     * its first checkpoint; but one beside another run's checkpoint
     * (X.log.csv and X.ckpt, the defaults' names) is that run's, and went
     * too: a config that named it as its train.log wiped it unsaid, and
     * that run's --resume then logged after the new run's rows. */
    size_t n = strlen(path), tail = strlen(".log.csv");
    if (r->opt->resume || n <= tail || strcmp(path + n - tail, ".log.csv") != 0) return 0;
    char *checkpoint = xmalloc(n - tail + sizeof ".ckpt");
    sprintf(checkpoint, "%.*s.ckpt", (int)(n - tail), path);
    struct stat cs;
    bool theirs = stat(checkpoint, &cs) == 0 && !input_file_same(checkpoint, r->cfg.train.checkpoint_path);
    if (theirs)
        cli_say("train", "%s (the log) is the log of the run whose checkpoint is %s: name another file for "
                         "train.log (or train into a new file with --out FILE)", path, checkpoint);
    free(checkpoint);
    return theirs ? EXIT_USAGE : 0;
}

int train_log_open(Run *r)
{
    const char *path = r->cfg.train.log_path;
    struct stat sb;
    bool regular = stat(path, &sb) != 0 || S_ISREG(sb.st_mode); /* (a new file is one) */
    if (!regular) { /* a device or FIFO: written as it is */
        r->log = fopen(path, r->opt->resume ? "a" : "w");
    } else {
        int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
        /* (a file system without locks, ENOLCK: the run goes on unguarded) */
        if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK) {
            cli_say("train", "%s (the log) is locked by a training run still going: wait "
                             "for it to end, or train into another file with --out FILE", path);
            close(fd);
            return EXIT_USAGE;
        }
        int status = fd >= 0 && fstat(fd, &sb) == 0 ? check_log(r, fd, &sb) : 0;
        if (status) {
            close(fd);
            return status;
        }
        if (fd >= 0 && !r->opt->resume && ftruncate(fd, 0) != 0) {
            close(fd);
            fd = -1;
        }
        r->log = fd >= 0 ? fdopen(fd, "a") : NULL;
        if (fd >= 0 && !r->log) close(fd);
    }
    if (!r->log || fstat(fileno(r->log), &sb) != 0) {
        cli_say("train", "%s: cannot write: %s", path, strerror(errno));
        return EXIT_WRITE;
    }
    /* Shorter than the checkpoint saw it (cut, or another run's since):
     * appended to, it got a torn row ("stepstep,7,...") and lost others,
     * unsaid.  Emptied, it starts again with its header, as a new log. */
    if (r->opt->resume && S_ISREG(sb.st_mode) && sb.st_size > 0 && sb.st_size < r->progress.log_bytes) {
        cli_say("train", "%s (the log) is %lld bytes, shorter than the %lld the checkpoint recorded: it "
                         "was cut since; move it away to resume with a new log", path,
                (long long)sb.st_size, r->progress.log_bytes);
        return EXIT_USAGE;
    }
    if (r->opt->resume && S_ISREG(sb.st_mode) && r->progress.log_bytes >= 0 &&
        sb.st_size > r->progress.log_bytes) {
        if (ftruncate(fileno(r->log), (off_t)r->progress.log_bytes) != 0) {
            cli_say("train", "%s: cannot cut it back to the checkpoint's %lld bytes: %s", path,
                    r->progress.log_bytes, strerror(errno));
            return EXIT_WRITE;
        }
        sb.st_size = (off_t)r->progress.log_bytes;
    }
    bool empty = !r->opt->resume || (S_ISREG(sb.st_mode) && sb.st_size == 0);
    errno = 0;
    if ((empty && fputs(LOG_HEADER, r->log) < 0) || fflush(r->log) != 0) {
        cli_say("train", "%s: cannot write: %s", path, strerror(errno ? errno : EIO));
        return EXIT_WRITE;
    }
    return 0;
}

int train_log_row(Run *r, const char *event, double loss, double loss_smooth, double lr, double tok_s,
                  double norm, double dloss, double bleu, double chrf)
{
    if (!r->log) return 0;
    errno = 0;
    /* epoch: 1-based, the epoch under way (or just ended), as the progress
     * line counts it.  loss_smooth comes last so older logs' columns keep
     * their places. */
    if (fprintf(r->log, "%s,%ld,%d,%.6f,%.3e,%.0f,%.4f,%.4f,%.3f,%.3f,%.1f,%.6f\n", event,
                r->trainer.opt.step, r->progress.epoch + 1, loss, lr, tok_s, norm, dloss, bleu, chrf,
                r->progress.elapsed, loss_smooth) < 0 ||
        fflush(r->log) != 0) {
        int why = errno ? errno : EIO;
        if (r->live) fputc('\n', stderr); /* after the progress line */
        cli_say("train", "%s: cannot write: %s", r->cfg.train.log_path, strerror(why));
        return EXIT_WRITE;
    }
    return 0;
}

int train_log_close(Run *r)
{
    FILE *f = r->log;
    r->log = NULL;
    if (f && fclose(f) != 0) {
        cli_say("train", "%s: cannot write: %s", r->cfg.train.log_path, strerror(errno));
        return EXIT_WRITE;
    }
    return 0;
}
