<?php

declare(strict_types=1);

namespace Lectern\Resource;

use Lectern\Collection;
use Lectern\Exception\LecternException;
use Lectern\Exception\NotFoundException;
use Lectern\Exception\ServerException;
use Lectern\Form;
use Lectern\FormDetail;
use Lectern\Submission;

/**
 * `GET /api/v1/forms` (needs `forms:read`): forms oldest first; `GET /api/v1/forms/{id}` (needs
 * `forms:read`): one form with its fields and intake address; and
 * `GET /api/v1/forms/{id}/submissions` (needs `submissions:read`): a form's submissions, newest first.
 */
final class Forms extends Listing
{
    /**
     * One form with its field definitions and the address a site posts it to, so a site can render it.
     *
     * @throws NotFoundException when the form does not exist
     * @throws LecternException
     */
    public function get(string $formId): FormDetail
    {
        if ($formId === '') {
            throw new \InvalidArgumentException('Lectern: the form id must not be empty');
        }
        $body = $this->transport->get('/forms/' . rawurlencode($formId));
        try {
            if (!\is_array($body['data'] ?? null)) {
                throw new \TypeError('a form response needs a `data` object');
            }

            return FormDetail::fromArray($body['data']);
        } catch (\TypeError $e) {
            $info = $this->transport->lastResponse;
            throw new ServerException(
                'Unexpected response from Lectern: the form does not have the fields of the API (is the base URL right?)',
                'unexpected_response',
                $info?->status,
                $info?->requestId,
                null,
                $e,
            );
        }
    }

    /**
     * One page of forms.
     *
     * @param int|null  $page     from 1 (default 1)
     * @param int|null  $pageSize 1 to 100 (default 20)
     * @param bool|null $active   true: only active forms; false: only inactive ones; null: all
     *
     * @return Collection<Form>
     *
     * @throws LecternException
     */
    public function list(?int $page = null, ?int $pageSize = null, ?bool $active = null): Collection
    {
        return $this->fetch('/forms', ['page' => $page, 'pageSize' => $pageSize, 'active' => $active], Form::fromArray(...));
    }

    /**
     * Every form, page after page (of `$pageSize`, default 100) as the loop asks for more.
     *
     * @return \Generator<int, Form>
     *
     * @throws LecternException
     */
    public function all(?int $pageSize = null, ?bool $active = null): \Generator
    {
        return self::walk(fn (int $page, int $size) => $this->list($page, $size, $active), $pageSize);
    }

    /**
     * One page of a form's submissions, newest first; an unknown form is a NotFoundException.
     * `$since` and `$until` select `createdAt` in `[since, until)`: a DateTimeInterface is sent as
     * UTC with `Z`, a string as it is (the server refuses what is not a date-time with an
     * InvalidRequestException naming the parameter). `$isRead` and `$isStarred` select the flags.
     *
     * @return Collection<Submission>
     *
     * @throws LecternException
     */
    public function submissions(
        string $formId,
        ?int $page = null,
        ?int $pageSize = null,
        \DateTimeInterface|string|null $since = null,
        \DateTimeInterface|string|null $until = null,
        ?bool $isRead = null,
        ?bool $isStarred = null,
    ): Collection {
        return $this->fetch(
            '/forms/' . rawurlencode($formId) . '/submissions',
            [
                'page' => $page,
                'pageSize' => $pageSize,
                'since' => self::time($since),
                'until' => self::time($until),
                'isRead' => $isRead,
                'isStarred' => $isStarred,
            ],
            Submission::fromArray(...),
        );
    }

    /**
     * Every submission of a form (the filters of {@see submissions()} apply), newest first, page
     * after page as the loop asks for more.
     *
     * @return \Generator<int, Submission>
     *
     * @throws LecternException
     */
    public function allSubmissions(
        string $formId,
        ?int $pageSize = null,
        \DateTimeInterface|string|null $since = null,
        \DateTimeInterface|string|null $until = null,
        ?bool $isRead = null,
        ?bool $isStarred = null,
    ): \Generator {
        return self::walk(
            fn (int $page, int $size) => $this->submissions($formId, $page, $size, $since, $until, $isRead, $isStarred),
            $pageSize,
        );
    }

    /**
     * A time as the API reads it: UTC with `Z`, whole seconds unless it has a fraction. A string is
     * left to the server, which accepts offsets and names the parameter when it is wrong.
     *
     * @internal
     */
    public static function time(\DateTimeInterface|string|null $value): ?string
    {
        if (!$value instanceof \DateTimeInterface) {
            return $value;
        }
        $utc = \DateTimeImmutable::createFromInterface($value)->setTimezone(new \DateTimeZone('UTC'));

        return $utc->format($utc->format('u') === '000000' ? 'Y-m-d\TH:i:s\Z' : 'Y-m-d\TH:i:s.u\Z');
    }
}
