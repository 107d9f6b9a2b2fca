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
     *
     * @return Collection<Submission>
     *
     * @throws LecternException
     */
    public function submissions(string $formId, ?int $page = null, ?int $pageSize = null): Collection
    {
        return $this->fetch(
            '/forms/' . rawurlencode($formId) . '/submissions',
            ['page' => $page, 'pageSize' => $pageSize],
            Submission::fromArray(...),
        );
    }

    /**
     * Every submission of a form, newest first, page after page as the loop asks for more.
     *
     * @return \Generator<int, Submission>
     *
     * @throws LecternException
     */
    public function allSubmissions(string $formId, ?int $pageSize = null): \Generator
    {
        return self::walk(fn (int $page, int $size) => $this->submissions($formId, $page, $size), $pageSize);
    }
}
