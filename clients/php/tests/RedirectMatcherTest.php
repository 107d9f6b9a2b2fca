<?php

declare(strict_types=1);

namespace Lectern\Tests;

use Lectern\Redirect;
use Lectern\RedirectMatcher;
use PHPUnit\Framework\TestCase;

/** What the shared redirect cases do not pin down: bad data, and the matcher's other views. */
final class RedirectMatcherTest extends TestCase
{
    /** @return array<string, string> */
    private static function rule(string $from, string $to, string $type = 'permanent', ?bool $active = null): array
    {
        return array_filter(['fromPath' => $from, 'toPath' => $to, 'type' => $type, 'isActive' => $active], static fn ($v) => $v !== null);
    }

    public function testARedirectLeadingIntoALoopAppliesNowhereAndMatchingEnds(): void
    {
        $matcher = new RedirectMatcher([self::rule('/a', '/b'), self::rule('/b', '/a'), self::rule('/c', '/a'), self::rule('/self', '/self')]);

        foreach (['/a', '/b', '/c', '/self'] as $target) {
            $this->assertNull($matcher->match($target), $target);
        }
        $this->assertCount(0, $matcher);
    }

    public function testADestinationOnAnotherHostIsNeverFollowed(): void
    {
        $matcher = new RedirectMatcher([self::rule('/out', '//evil.example/x'), self::rule('/abs', 'https://evil.example/')]);

        $this->assertNull($matcher->match('/out'));
        $this->assertNull($matcher->match('/abs'));
    }

    public function testTheFirstOfTwoActiveRedirectsWithTheSamePathWins(): void
    {
        $matcher = new RedirectMatcher([
            self::rule('/dup', '/off', active: false),
            self::rule('/dup', '/first'),
            self::rule('/dup', '/second', 'temporary'),
        ]);

        $this->assertSame(['status' => 301, 'location' => '/first'], $matcher->match('/dup')?->toArray());
    }

    public function testARedirectWithoutIsActiveCountsAsActive(): void
    {
        $matcher = new RedirectMatcher([self::rule('/a', '/b', 'temporary')]);

        $this->assertSame(302, $matcher->match('/a?x')?->status);
    }

    public function testItAcceptsRedirectObjectsAndAnyIterable(): void
    {
        $redirects = (static function () {
            yield new Redirect('r1', '/a', '/b', 'permanent', true, '2024-01-05T10:00:00Z', '2024-01-05T10:00:00Z');
            yield new Redirect('r2', '/b', '/c', 'temporary', true, '2024-01-05T10:00:00Z', '2024-01-05T10:00:00Z');
        })();

        $this->assertSame(['status' => 302, 'location' => '/c'], (new RedirectMatcher($redirects))->match('/a')?->toArray());
    }

    public function testRulesListsEveryResolvedRedirectInTheOrderGiven(): void
    {
        $matcher = new RedirectMatcher([self::rule('/z', '/y'), self::rule('/y', '/ü'), self::rule('/off', '/x', active: false), self::rule('/loop', '/loop')]);

        $this->assertSame(
            ['/z' => ['/ü', 301, '/%C3%BC'], '/y' => ['/ü', 301, '/%C3%BC']],
            iterator_to_array($matcher->rules()),
        );
        $this->assertCount(2, $matcher);
        $this->assertNull($matcher->resolve('/off'));
    }

    public function testALongChainIsFollowedToItsEnd(): void
    {
        $rules = [];
        for ($i = 0; $i < 5000; ++$i) {
            $rules[] = self::rule("/p$i", '/p' . ($i + 1), $i === 4000 ? 'temporary' : 'permanent');
        }
        $matcher = new RedirectMatcher($rules);

        $this->assertSame(['status' => 302, 'location' => '/p5000'], $matcher->match('/p0')?->toArray());
        $this->assertSame(['status' => 301, 'location' => '/p5000'], $matcher->match('/p4001')?->toArray());
    }

    public function testAnInvalidRequestPathMatchesNothingWhateverItHolds(): void
    {
        $matcher = new RedirectMatcher([self::rule('/a', '/b')]);

        $this->assertNull(RedirectMatcher::decodePath("/\xC3"));
        $this->assertNull(RedirectMatcher::decodePath('/%ED%A0%80'), 'an encoded surrogate is not UTF-8');
        $this->assertNull(RedirectMatcher::decodePath('/%C0%AF'), 'an overlong form is not UTF-8');
        $this->assertSame('/a b+', RedirectMatcher::decodePath('/a%20b+'));
        $this->assertNull($matcher->match(''));
    }

    public function testExportedRulesBuildAMatcherThatAnswersTheSame(): void
    {
        $spec = json_decode((string) file_get_contents(\dirname(__DIR__, 3) . '/spec/redirect-cases.json'), true);
        $original = new RedirectMatcher($spec['redirects']);
        $rules = json_decode(json_encode($original->exportRules(), JSON_THROW_ON_ERROR), true);
        $copy = RedirectMatcher::fromExportedRules($rules);

        foreach ($spec['cases'] as $case) {
            $this->assertEquals($original->match($case['target']), $copy->match($case['target']), $case['name']);
        }
    }

    public function testADamagedExportMatchesNothingWhereItIsDamaged(): void
    {
        $matcher = RedirectMatcher::fromExportedRules(['/a' => ['/b', true], '/b' => 'junk', '/c' => ['/d'], '/e' => ['/f', false]]);

        $this->assertNull($matcher->match('/a'));
        $this->assertNull($matcher->match('/b'));
        $this->assertNull($matcher->match('/c'));
        $this->assertSame(['status' => 302, 'location' => '/f'], $matcher->match('/e')?->toArray());
    }

    public function testItRefusesAnItemThatIsNotARedirect(): void
    {
        $this->expectException(\InvalidArgumentException::class);
        new RedirectMatcher([self::rule('/a', '/b'), 'not a redirect']);
    }
}
