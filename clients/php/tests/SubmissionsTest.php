<?php

declare(strict_types=1);

namespace Lectern\Tests;

use Lectern\Lectern;
use Lectern\Resource\Submissions;
use Lectern\Submission;
use Lectern\Tests\Support\TestServer;
use PHPUnit\Framework\TestCase;

/** The submissions filters and the sync helper, against the contract's real test server. */
final class SubmissionsTest extends TestCase
{
    private function lectern(): Lectern
    {
        $launcher = TestServer::launcher();

        return new Lectern($launcher['baseUrl'], $launcher['keys']['admin']);
    }

    /**
     * @param iterable<Submission> $items
     *
     * @return list<string>
     */
    private static function ids(iterable $items): array
    {
        $ids = [];
        foreach ($items as $item) {
            $ids[] = $item->id;
        }

        return $ids;
    }

    public function testSendsADateTimeAsUtcAndKeepsItsFraction(): void
    {
        $lectern = $this->lectern();
        $since = new \DateTimeImmutable('2024-02-03T11:00:00+01:00');
        $this->assertSame(
            ['submission_c05', 'submission_c04', 'submission_c03'],
            self::ids($lectern->forms->submissions('form_contact', since: $since)),
        );
        // Half a second before 10:00:00 counts as 10:00:00, which until excludes.
        $until = new \DateTime('2024-02-03T09:59:59.500000Z');
        $this->assertSame(
            ['submission_c02', 'submission_c01'],
            self::ids($lectern->forms->allSubmissions('form_contact', pageSize: 1, until: $until)),
        );
        $this->assertSame(
            ['submission_c04'],
            self::ids($lectern->forms->submissions('form_contact', isRead: true, isStarred: true)),
        );
    }

    public function testSyncsUpToNowCutToTheWholeSecondThenFromThere(): void
    {
        $lectern = $this->lectern();
        // 10:00:00.9 on 3 February: submission_c03 and _c04, created at 10:00:00, belong to the next run.
        $moment = (float) (new \DateTimeImmutable('2024-02-03T10:00:00Z'))->getTimestamp() + 0.9;
        $first = (new Submissions($lectern->forms, static fn (): float => $moment))->sync('form_contact', pageSize: 1);
        $this->assertSame(['submission_c02', 'submission_c01'], self::ids($first->items));
        $this->assertSame('2024-02-03T10:00:00Z', $first->until);
        $second = $lectern->submissions->sync(
            'form_contact',
            since: $first->until,
            until: new \DateTimeImmutable('2024-02-05T11:00:00+01:00'),
            isStarred: true,
        );
        $this->assertSame(['submission_c04'], self::ids($second->items));
        $this->assertSame('2024-02-05T10:00:00Z', $second->until);
    }
}
