<?php

declare(strict_types=1);

namespace Lectern\Resource;

use Lectern\Exception\LecternException;
use Lectern\SyncResult;

/**
 * Incremental reads of a form's submissions (needs `submissions:read`): `sync()` reads one window
 * `[since, until)` to its end and hands back the `until` to start the next run from.
 */
final class Submissions
{
    /** @var \Closure(): float */
    private readonly \Closure $clock;

    /**
     * @param (callable(): float)|null $clock the Unix time in seconds (default `microtime(true)`)
     */
    public function __construct(private readonly Forms $forms, ?callable $clock = null)
    {
        $this->clock = $clock !== null ? $clock(...) : static fn (): float => microtime(true);
    }

    /**
     * Every submission created in `[since, until)`, page by page, and the window's `until`.
     *
     * `$until` defaults to now, taken once at the start and cut to the whole second: the server
     * counts a fraction as the next second, which would let a submission of this very second land
     * in this window after it was read, and not in the next. Without `$since` it reads everything
     * before `$until` (a first run). Store `$result->until` once the items are handled, and pass it
     * as `since` next time:
     *
     *     $result = $lectern->submissions->sync('form_contact', since: $state['until'] ?? null);
     *     $crm->save($result->items);
     *     $state['until'] = $result->until;
     *
     * @throws LecternException
     */
    public function sync(
        string $formId,
        \DateTimeInterface|string|null $since = null,
        \DateTimeInterface|string|null $until = null,
        ?bool $isRead = null,
        ?bool $isStarred = null,
        ?int $pageSize = null,
    ): SyncResult {
        $until ??= new \DateTimeImmutable('@' . (int) floor(($this->clock)()));
        $end = (string) Forms::time($until);
        $items = iterator_to_array(
            $this->forms->allSubmissions($formId, $pageSize, $since, $end, $isRead, $isStarred),
            false,
        );

        return new SyncResult($items, $end);
    }
}
