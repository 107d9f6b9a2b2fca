<?php

declare(strict_types=1);

namespace Lectern\Tests;

use Lectern\Redirect;
use Lectern\RedirectMatcher;
use Lectern\Tests\Support\TestServer;
use PHPUnit\Framework\TestCase;

/** Runs every case of spec/redirect-cases.json (shared by every runtime) through the matcher. */
final class RedirectCasesTest extends TestCase
{
    /** @return iterable<string, array{string, array{status: int, location: string}|null}> */
    public function cases(): iterable
    {
        foreach (TestServer::spec('redirect-cases.json')['cases'] as $case) {
            yield $case['name'] => [$case['target'], $case['expect'], $case['skip']['php'] ?? null];
        }
    }

    /**
     * @dataProvider cases
     *
     * @param array{status: int, location: string}|null $expect
     */
    public function testTheMatcherAnswersEachCaseFromTheApiArrays(string $target, ?array $expect, ?string $skip): void
    {
        if ($skip !== null) {
            $this->markTestSkipped($skip);
        }
        $matcher = new RedirectMatcher(TestServer::spec('redirect-cases.json')['redirects']);
        $this->assertSame($expect, $matcher->match($target)?->toArray());
    }

    /**
     * @dataProvider cases
     *
     * @param array{status: int, location: string}|null $expect
     */
    public function testTheMatcherAnswersEachCaseFromRedirectObjects(string $target, ?array $expect, ?string $skip): void
    {
        if ($skip !== null) {
            $this->markTestSkipped($skip);
        }
        $redirects = array_map(Redirect::fromArray(...), TestServer::spec('redirect-cases.json')['redirects']);
        $this->assertSame($expect, (new RedirectMatcher($redirects))->match($target)?->toArray());
    }
}
