<?php

declare(strict_types=1);

namespace Lectern\Exception;

/**
 * A {@see \Lectern\RedirectLoader} found more active redirects than its `maxRedirects` (`type` is
 * `too_many_redirects`, `status` null: no response failed). The loader keeps the copy it had.
 */
final class RedirectLimitException extends LecternException
{
    public function __construct(public readonly int $maxRedirects)
    {
        parent::__construct(
            \sprintf("Lectern has more than %d active redirects, the loader's maxRedirects: raise it, or serve them from the web server's configuration (lectern redirects export)", $maxRedirects),
            'too_many_redirects',
        );
    }
}
