import type { Kysely } from 'kysely'
import { type FrozenStatements, runFrozen } from './frozen.js'

/**
 * Content versions per resource, replacing the single version of migration 003: one per kind
 * (`content_versions`: forms, pages, redirects) and one per form for its submissions
 * (`form_submission_counts`), which also holds the form's submission total and unread count. The
 * database's own triggers move them in the transaction of the write, whoever makes it, so a write
 * to one form's submissions moves that form's row alone and a redirect change moves `redirects`
 * alone. A form's row is made when the form is and kept after it is deleted, so its version only
 * ever grows; every version starts above the last global one, so no entity tag built before
 * repeats.
 *
 * Counts follow writes as deltas: `unread` counts rows with `is_read = 0`. SQLite has only row
 * triggers (an update that keeps the form moves one row once); PostgreSQL fires once per statement
 * and reads the statement's rows from its transition tables, grouped per form, in form order so
 * that concurrent statements lock rows in the same order.
 */
const UP: FrozenStatements = {
  sqlite: [
    `create table "content_versions" ("kind" text collate binary primary key, "version" bigint not null)`,
    `insert into "content_versions" ("kind", "version")
      select "kinds"."kind", "content_version"."version" + 1
      from "content_version", (select 'forms' as "kind" union all select 'pages' union all select 'redirects') as "kinds"`,
    `create table "form_submission_counts" ("form_id" text collate binary primary key, "version" bigint not null,
      "total" bigint not null, "unread" bigint not null)`,
    `insert into "form_submission_counts" ("form_id", "version", "total", "unread")
      select "forms"."id", "content_version"."version" + 1,
        (select count(*) from "submissions" where "submissions"."form_id" = "forms"."id"),
        (select count(*) from "submissions" where "submissions"."form_id" = "forms"."id" and "submissions"."is_read" = 0)
      from "forms", "content_version"`,
    `drop trigger "forms_insert_content_version"`,
    `drop trigger "forms_update_content_version"`,
    `drop trigger "forms_delete_content_version"`,
    `drop trigger "submissions_insert_content_version"`,
    `drop trigger "submissions_update_content_version"`,
    `drop trigger "submissions_delete_content_version"`,
    `drop trigger "pages_insert_content_version"`,
    `drop trigger "pages_update_content_version"`,
    `drop trigger "pages_delete_content_version"`,
    `drop trigger "redirects_insert_content_version"`,
    `drop trigger "redirects_update_content_version"`,
    `drop trigger "redirects_delete_content_version"`,
    `drop table "content_version"`,
    `create trigger "forms_insert_content_version" after insert on "forms"
      begin update "content_versions" set "version" = "version" + 1 where "kind" = 'forms'; end`,
    `create trigger "forms_update_content_version" after update on "forms"
      begin update "content_versions" set "version" = "version" + 1 where "kind" = 'forms'; end`,
    `create trigger "forms_delete_content_version" after delete on "forms"
      begin update "content_versions" set "version" = "version" + 1 where "kind" = 'forms'; end`,
    `create trigger "pages_insert_content_version" after insert on "pages"
      begin update "content_versions" set "version" = "version" + 1 where "kind" = 'pages'; end`,
    `create trigger "pages_update_content_version" after update on "pages"
      begin update "content_versions" set "version" = "version" + 1 where "kind" = 'pages'; end`,
    `create trigger "pages_delete_content_version" after delete on "pages"
      begin update "content_versions" set "version" = "version" + 1 where "kind" = 'pages'; end`,
    `create trigger "redirects_insert_content_version" after insert on "redirects"
      begin update "content_versions" set "version" = "version" + 1 where "kind" = 'redirects'; end`,
    `create trigger "redirects_update_content_version" after update on "redirects"
      begin update "content_versions" set "version" = "version" + 1 where "kind" = 'redirects'; end`,
    `create trigger "redirects_delete_content_version" after delete on "redirects"
      begin update "content_versions" set "version" = "version" + 1 where "kind" = 'redirects'; end`,
    `create trigger "forms_insert_form_counts" after insert on "forms"
      begin
        insert into "form_submission_counts" ("form_id", "version", "total", "unread")
          values (new."id", (select "version" from "content_versions" where "kind" = 'forms'), 0, 0)
          on conflict ("form_id") do update set "version" = "version" + 1;
      end`,
    `create trigger "forms_update_form_counts" after update of "id" on "forms" when old."id" is not new."id"
      begin
        update "form_submission_counts" set "version" = "version" + 1 where "form_id" = old."id";
        insert into "form_submission_counts" ("form_id", "version", "total", "unread")
          values (new."id", (select "version" from "content_versions" where "kind" = 'forms'), 0, 0)
          on conflict ("form_id") do update set "version" = "version" + 1;
      end`,
    `create trigger "forms_delete_form_counts" after delete on "forms"
      begin update "form_submission_counts" set "version" = "version" + 1 where "form_id" = old."id"; end`,
    `create trigger "submissions_insert_form_counts" after insert on "submissions"
      begin
        insert into "form_submission_counts" ("form_id", "version", "total", "unread")
          values (new."form_id", (select "version" from "content_versions" where "kind" = 'forms'), 1, new."is_read" = 0)
          on conflict ("form_id") do update
          set "version" = "version" + 1, "total" = "total" + 1, "unread" = "unread" + (new."is_read" = 0);
      end`,
    `create trigger "submissions_update_form_counts" after update on "submissions" when old."form_id" is new."form_id"
      begin
        update "form_submission_counts"
          set "version" = "version" + 1, "unread" = "unread" - (old."is_read" = 0) + (new."is_read" = 0)
          where "form_id" = new."form_id";
      end`,
    `create trigger "submissions_move_form_counts" after update on "submissions" when old."form_id" is not new."form_id"
      begin
        update "form_submission_counts"
          set "version" = "version" + 1, "total" = "total" - 1, "unread" = "unread" - (old."is_read" = 0)
          where "form_id" = old."form_id";
        insert into "form_submission_counts" ("form_id", "version", "total", "unread")
          values (new."form_id", (select "version" from "content_versions" where "kind" = 'forms'), 1, new."is_read" = 0)
          on conflict ("form_id") do update
          set "version" = "version" + 1, "total" = "total" + 1, "unread" = "unread" + (new."is_read" = 0);
      end`,
    `create trigger "submissions_delete_form_counts" after delete on "submissions"
      begin
        update "form_submission_counts"
          set "version" = "version" + 1, "total" = "total" - 1, "unread" = "unread" - (old."is_read" = 0)
          where "form_id" = old."form_id";
      end`,
  ],
  postgres: [
    `create table "content_versions" ("kind" text collate "C" primary key, "version" bigint not null)`,
    `insert into "content_versions" ("kind", "version")
      select "kinds"."kind", "content_version"."version" + 1
      from "content_version", (values ('forms'), ('pages'), ('redirects')) as "kinds" ("kind")`,
    `create table "form_submission_counts" ("form_id" text collate "C" primary key, "version" bigint not null,
      "total" bigint not null, "unread" bigint not null)`,
    `insert into "form_submission_counts" ("form_id", "version", "total", "unread")
      select "forms"."id", "content_version"."version" + 1,
        (select count(*) from "submissions" where "submissions"."form_id" = "forms"."id"),
        (select count(*) from "submissions" where "submissions"."form_id" = "forms"."id" and "submissions"."is_read" = 0)
      from "forms", "content_version"`,
    `drop trigger "forms_content_version" on "forms"`,
    `drop trigger "submissions_content_version" on "submissions"`,
    `drop trigger "pages_content_version" on "pages"`,
    `drop trigger "redirects_content_version" on "redirects"`,
    `drop function bump_content_version()`,
    `drop table "content_version"`,
    `create function "lectern_bump_kind_version"() returns trigger language plpgsql as $$
    begin
      update "content_versions" set "version" = "version" + 1 where "kind" = TG_ARGV[0];
      return null;
    end $$`,
    `create trigger "forms_content_version" after insert or update or delete or truncate on "forms"
      for each statement execute function "lectern_bump_kind_version"('forms')`,
    `create trigger "pages_content_version" after insert or update or delete or truncate on "pages"
      for each statement execute function "lectern_bump_kind_version"('pages')`,
    `create trigger "redirects_content_version" after insert or update or delete or truncate on "redirects"
      for each statement execute function "lectern_bump_kind_version"('redirects')`,
    `create function "lectern_form_rows_changed"() returns trigger language plpgsql as $$
    begin
      if TG_OP = 'TRUNCATE' then
        update "form_submission_counts" set "version" = "version" + 1, "total" = 0, "unread" = 0;
      elsif TG_OP = 'DELETE' then
        update "form_submission_counts" set "version" = "version" + 1
          where "form_id" in (select "id" from "lectern_old_rows");
      elsif TG_OP = 'UPDATE' then
        update "form_submission_counts" set "version" = "version" + 1
          where "form_id" in (select "id" from "lectern_old_rows" except select "id" from "lectern_new_rows");
        insert into "form_submission_counts" as "c" ("form_id", "version", "total", "unread")
          select "n"."id", (select "version" from "content_versions" where "kind" = 'forms'), 0, 0
          from (select "id" from "lectern_new_rows" except select "id" from "lectern_old_rows") as "n"
          order by "n"."id"
          on conflict ("form_id") do update set "version" = "c"."version" + 1;
      else
        insert into "form_submission_counts" as "c" ("form_id", "version", "total", "unread")
          select "n"."id", (select "version" from "content_versions" where "kind" = 'forms'), 0, 0
          from "lectern_new_rows" as "n"
          order by "n"."id"
          on conflict ("form_id") do update set "version" = "c"."version" + 1;
      end if;
      return null;
    end $$`,
    `create trigger "forms_insert_form_counts" after insert on "forms"
      referencing new table as "lectern_new_rows"
      for each statement execute function "lectern_form_rows_changed"()`,
    `create trigger "forms_update_form_counts" after update on "forms"
      referencing old table as "lectern_old_rows" new table as "lectern_new_rows"
      for each statement execute function "lectern_form_rows_changed"()`,
    `create trigger "forms_delete_form_counts" after delete on "forms"
      referencing old table as "lectern_old_rows"
      for each statement execute function "lectern_form_rows_changed"()`,
    `create trigger "forms_truncate_form_counts" after truncate on "forms"
      for each statement execute function "lectern_form_rows_changed"()`,
    `create function "lectern_submission_rows_changed"() returns trigger language plpgsql as $$
    begin
      if TG_OP = 'TRUNCATE' then
        update "form_submission_counts" set "version" = "version" + 1, "total" = 0, "unread" = 0;
      elsif TG_OP = 'INSERT' then
        insert into "form_submission_counts" as "c" ("form_id", "version", "total", "unread")
          select "d"."form_id", (select "version" from "content_versions" where "kind" = 'forms'),
            sum("d"."total"), sum("d"."unread")
          from (select "form_id", 1 as "total", case when "is_read" = 0 then 1 else 0 end as "unread" from "lectern_new_rows") as "d"
          group by "d"."form_id"
          order by "d"."form_id"
          on conflict ("form_id") do update set "version" = "c"."version" + 1,
            "total" = "c"."total" + "excluded"."total", "unread" = "c"."unread" + "excluded"."unread";
      elsif TG_OP = 'DELETE' then
        insert into "form_submission_counts" as "c" ("form_id", "version", "total", "unread")
          select "d"."form_id", (select "version" from "content_versions" where "kind" = 'forms'),
            sum("d"."total"), sum("d"."unread")
          from (select "form_id", -1 as "total", case when "is_read" = 0 then -1 else 0 end as "unread" from "lectern_old_rows") as "d"
          group by "d"."form_id"
          order by "d"."form_id"
          on conflict ("form_id") do update set "version" = "c"."version" + 1,
            "total" = "c"."total" + "excluded"."total", "unread" = "c"."unread" + "excluded"."unread";
      else
        insert into "form_submission_counts" as "c" ("form_id", "version", "total", "unread")
          select "d"."form_id", (select "version" from "content_versions" where "kind" = 'forms'),
            sum("d"."total"), sum("d"."unread")
          from (select "form_id", 1 as "total", case when "is_read" = 0 then 1 else 0 end as "unread" from "lectern_new_rows"
            union all select "form_id", -1 as "total", case when "is_read" = 0 then -1 else 0 end as "unread" from "lectern_old_rows") as "d"
          group by "d"."form_id"
          order by "d"."form_id"
          on conflict ("form_id") do update set "version" = "c"."version" + 1,
            "total" = "c"."total" + "excluded"."total", "unread" = "c"."unread" + "excluded"."unread";
      end if;
      return null;
    end $$`,
    `create trigger "submissions_insert_form_counts" after insert on "submissions"
      referencing new table as "lectern_new_rows"
      for each statement execute function "lectern_submission_rows_changed"()`,
    `create trigger "submissions_update_form_counts" after update on "submissions"
      referencing old table as "lectern_old_rows" new table as "lectern_new_rows"
      for each statement execute function "lectern_submission_rows_changed"()`,
    `create trigger "submissions_delete_form_counts" after delete on "submissions"
      referencing old table as "lectern_old_rows"
      for each statement execute function "lectern_submission_rows_changed"()`,
    `create trigger "submissions_truncate_form_counts" after truncate on "submissions"
      for each statement execute function "lectern_submission_rows_changed"()`,
  ],
}

const DOWN: FrozenStatements = {
  sqlite: [
    `drop trigger "submissions_delete_form_counts"`,
    `drop trigger "submissions_move_form_counts"`,
    `drop trigger "submissions_update_form_counts"`,
    `drop trigger "submissions_insert_form_counts"`,
    `drop trigger "forms_delete_form_counts"`,
    `drop trigger "forms_update_form_counts"`,
    `drop trigger "forms_insert_form_counts"`,
    `drop trigger "forms_insert_content_version"`,
    `drop trigger "forms_update_content_version"`,
    `drop trigger "forms_delete_content_version"`,
    `drop trigger "pages_insert_content_version"`,
    `drop trigger "pages_update_content_version"`,
    `drop trigger "pages_delete_content_version"`,
    `drop trigger "redirects_insert_content_version"`,
    `drop trigger "redirects_update_content_version"`,
    `drop trigger "redirects_delete_content_version"`,
    `create table "content_version" ("id" integer primary key, "version" bigint not null)`,
    `insert into "content_version" ("id", "version")
      select 1, max("version") + 1 from (select "version" from "content_versions" union all select "version" from "form_submission_counts")`,
    `drop table "form_submission_counts"`,
    `drop table "content_versions"`,
    ...['forms', 'submissions', 'pages', 'redirects'].flatMap((table) =>
      ['insert', 'update', 'delete'].map(
        (operation) => `create trigger "${table}_${operation}_content_version"
        after ${operation} on "${table}"
        begin update content_version set version = version + 1 where id = 1; end`,
      ),
    ),
  ],
  postgres: [
    `drop trigger "submissions_truncate_form_counts" on "submissions"`,
    `drop trigger "submissions_delete_form_counts" on "submissions"`,
    `drop trigger "submissions_update_form_counts" on "submissions"`,
    `drop trigger "submissions_insert_form_counts" on "submissions"`,
    `drop function "lectern_submission_rows_changed"()`,
    `drop trigger "forms_truncate_form_counts" on "forms"`,
    `drop trigger "forms_delete_form_counts" on "forms"`,
    `drop trigger "forms_update_form_counts" on "forms"`,
    `drop trigger "forms_insert_form_counts" on "forms"`,
    `drop function "lectern_form_rows_changed"()`,
    `drop trigger "forms_content_version" on "forms"`,
    `drop trigger "pages_content_version" on "pages"`,
    `drop trigger "redirects_content_version" on "redirects"`,
    `drop function "lectern_bump_kind_version"()`,
    `create table "content_version" ("id" integer primary key, "version" bigint not null)`,
    `insert into "content_version" ("id", "version")
      select 1, max("version") + 1 from (select "version" from "content_versions" union all select "version" from "form_submission_counts") as "all_versions"`,
    `drop table "form_submission_counts"`,
    `drop table "content_versions"`,
    `create function bump_content_version() returns trigger language plpgsql as $$
      begin update content_version set version = version + 1 where id = 1; return null; end $$`,
    ...['forms', 'submissions', 'pages', 'redirects'].map(
      (table) => `create trigger "${table}_content_version"
        after insert or update or delete or truncate on "${table}"
        for each statement execute function bump_content_version()`,
    ),
  ],
}

export const up = (db: Kysely<unknown>): Promise<void> => runFrozen(db, UP)
export const down = (db: Kysely<unknown>): Promise<void> => runFrozen(db, DOWN)
