<?php

declare(strict_types=1);

namespace Lectern;

/**
 * Lectern's one redirect-matching algorithm over a set of redirects, with no network (every runtime
 * runs the same cases, spec/redirect-cases.json):
 *
 * 1. The request path is percent-decoded once; an invalid encoding (a `%` without two hex digits,
 *    bytes that are not well-formed UTF-8) matches nothing.
 * 2. It is compared exactly (case-sensitive, no trailing-slash folding) with each **active**
 *    redirect's `fromPath`.
 * 3. A match is followed along the chain of active redirects to its end, so a visitor gets one hop;
 *    301 only if every link followed is permanent, else 302.
 * 4. `Location` is the final `toPath` percent-encoded (every byte but `A–Z a–z 0–9 - . _ ~` and `/`),
 *    then `?` and the request's query string byte for byte, when it has a non-empty one. A fragment
 *    is ignored.
 *
 * Should two active redirects share a `fromPath`, the first wins. A redirect leading into a loop, or
 * to a destination that is not a path on this site (`//host`), applies nowhere: matching never hangs
 * and never sends a visitor off-site. Chains are resolved lazily and remembered, so a matcher built
 * for one request (the usual PHP lifetime) only walks the chain that request needs.
 *
 * ```php
 * $matcher = new Lectern\RedirectMatcher($lectern->redirects->all(active: true));
 * $match = $matcher->match($_SERVER['REQUEST_URI']); // null, or ->status and ->location
 * ```
 */
final class RedirectMatcher implements \Countable
{
    /** @var array<array-key, mixed> active `fromPath` → [`toPath`, permanent] (checked as it is walked: it may come from a cache) */
    private array $next = [];

    /** @var array<string, array{string, int, string}|false> `fromPath` → [final `toPath`, status, location], false: applies nowhere */
    private array $resolved = [];

    /**
     * @param iterable<Redirect|array<string, mixed>> $redirects redirect items: {@see Redirect} objects,
     *                                                           or arrays as decoded from the API (at least
     *                                                           `fromPath`, `toPath`, `type`; `isActive`
     *                                                           missing counts as active)
     */
    public function __construct(iterable $redirects)
    {
        foreach ($redirects as $redirect) {
            if ($redirect instanceof Redirect) {
                [$from, $to, $type, $active] = [$redirect->fromPath, $redirect->toPath, $redirect->type, $redirect->isActive];
            } elseif (\is_array($redirect)) {
                [$from, $to, $type, $active] = [$redirect['fromPath'] ?? null, $redirect['toPath'] ?? null, $redirect['type'] ?? null, $redirect['isActive'] ?? true];
            } else {
                throw new \InvalidArgumentException('RedirectMatcher: each redirect must be a Lectern\Redirect or an array, got ' . get_debug_type($redirect));
            }
            if (!\is_string($from) || !\is_string($to)) {
                throw new \InvalidArgumentException('RedirectMatcher: each redirect needs string fromPath and toPath');
            }
            if ($active === false || isset($this->next[$from])) {
                continue;
            }
            $this->next[$from] = [$to, $type === 'permanent'];
        }
    }

    /**
     * The active redirects in the compact form {@see fromExportedRules()} takes back: `fromPath` →
     * [`toPath`, permanent], in the order given. For caches (the {@see RedirectLoader}'s file).
     *
     * @return array<string, array{string, bool}>
     */
    public function exportRules(): array
    {
        return $this->next;
    }

    /**
     * A matcher from {@see exportRules()}'s output, without the cost of reading redirect items: a
     * cache holding thousands of redirects is ready in the time `json_decode` takes. An entry that is
     * not of that form (a damaged cache) matches nothing.
     *
     * @param array<array-key, mixed> $rules
     */
    public static function fromExportedRules(array $rules): self
    {
        $matcher = new self([]);
        $matcher->next = $rules;

        return $matcher;
    }

    /**
     * The answer for a request target (`/path`, `/path?query`, maybe with `#fragment`), or null when
     * no active redirect matches and the request should be served as usual.
     */
    public function match(string $target): ?RedirectMatch
    {
        $hash = strpos($target, '#');
        if ($hash !== false) {
            $target = substr($target, 0, $hash);
        }
        $mark = strpos($target, '?');
        $rawPath = $mark === false ? $target : substr($target, 0, $mark);
        $query = $mark === false ? '' : substr($target, $mark + 1);
        $path = self::decodePath($rawPath);
        if ($path === null) {
            return null;
        }
        $answer = $this->resolve($path);
        if ($answer === null) {
            return null;
        }

        // An empty query (a bare `?`) is no query: no runtime can tell the two apart.
        return new RedirectMatch($answer[1], $query === '' ? $answer[2] : $answer[2] . '?' . $query);
    }

    /**
     * Where a decoded path (as stored) finally leads: [final `toPath`, status, `Location` without a
     * query], or null when no active redirect applies to it.
     *
     * @return array{string, int, string}|null
     */
    public function resolve(string $decodedPath): ?array
    {
        if (!isset($this->next[$decodedPath])) {
            return null;
        }
        if (!isset($this->resolved[$decodedPath])) {
            $this->walk($decodedPath);
        }

        return $this->resolved[$decodedPath] ?: null;
    }

    /**
     * Every active redirect that applies, resolved, in the order given: `fromPath` →
     * [final `toPath`, status, `Location` without a query]. What a web-server export would write.
     *
     * @return \Generator<string, array{string, int, string}>
     */
    public function rules(): \Generator
    {
        foreach (array_keys($this->next) as $from) {
            $answer = $this->resolve((string) $from);
            if ($answer !== null) {
                yield (string) $from => $answer;
            }
        }
    }

    /** How many active redirects apply (those leading into a loop or off-site do not). */
    public function count(): int
    {
        return iterator_count($this->rules());
    }

    /**
     * Percent-decodes a request path once (UTF-8), or null when the encoding is invalid: a `%` not
     * followed by two hex digits, or bytes that are not well-formed UTF-8 (overlong forms and encoded
     * surrogates included). `+` stays a plus, as paths have no form encoding.
     */
    public static function decodePath(string $path): ?string
    {
        if (str_contains($path, '%')) {
            if (preg_match('/%(?![0-9A-Fa-f]{2})/', $path) === 1) {
                return null;
            }
            $path = rawurldecode($path);
        }

        // PCRE's UTF-8 check refuses overlong forms, surrogates and code points past U+10FFFF.
        return preg_match('//u', $path) === 1 ? $path : null;
    }

    /**
     * A stored (decoded) path as a `Location` may carry it: every byte but an RFC 3986 unreserved
     * character and `/` percent-encoded in uppercase hex (`/neu-ü` → `/neu-%C3%BC`, `%` → `%25`).
     * Encoding more than a URL strictly needs keeps the answer identical to the web-server exports,
     * where `:`, `$`, `'`… would mean something.
     */
    public static function encodePath(string $path): string
    {
        return str_replace('%2F', '/', rawurlencode($path));
    }

    /** Follows the chain from `$start`, memoizing every path on the way. */
    private function walk(string $start): void
    {
        $walk = [];
        $onWalk = [];
        $current = $start;
        // 'end': the chain ended at a path that does not redirect; false: a loop; an array: known.
        $tail = 'end';
        while (true) {
            if (isset($this->resolved[$current])) {
                $tail = $this->resolved[$current];
                break;
            }
            $rule = $this->next[$current] ?? null;
            if ($rule === null) {
                break;
            }
            if (!\is_array($rule) || !\is_string($rule[0] ?? null) || !\is_bool($rule[1] ?? null)) {
                $tail = false;
                break;
            }
            if (isset($onWalk[$current])) {
                $tail = false;
                break;
            }
            $onWalk[$current] = true;
            $walk[] = $current;
            $current = $rule[0];
        }
        // Unwind: each link's answer is its successor's, downgraded to 302 by a temporary link.
        for ($i = \count($walk) - 1; $i >= 0; --$i) {
            $from = $walk[$i];
            [$to, $permanent] = $this->next[$from];
            if ($tail === false) {
                $answer = false;
            } elseif ($tail === 'end') {
                $answer = str_starts_with($to, '/') && !str_starts_with($to, '//')
                    ? [$to, $permanent ? 301 : 302, self::encodePath($to)]
                    : false;
            } else {
                $answer = [$tail[0], $permanent && $tail[1] === 301 ? 301 : 302, $tail[2]];
            }
            $this->resolved[$from] = $answer;
            $tail = $answer;
        }
        // A malformed rule (from a damaged cache) is not on the walk: it applies nowhere.
        $this->resolved[$start] ??= false;
    }
}
