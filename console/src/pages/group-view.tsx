/**
 * One group (`#/groups/<id>`, docs/API.md §10.3): its fields (groups/view) with its keyword and
 * parent group, Edit (groups/update, only what changed), Delete (groups/delete, asked first: its
 * members stay as contacts, groups inside it lose their parent) and its members (group-members.tsx).
 */
import { useState } from 'preact/hooks';
import { errorText, type Api } from '../api.ts';
import { go, placeHref, usePlace } from '../route.ts';
import { ErrorLine } from './list.tsx';
import { ConfirmButton, When, focusHeadingSoon } from './ui.tsx';
import { count, forgetGroupName, GroupLink, leaveNotice, StatusLine, useRecord } from './contact-shared.tsx';
import { GroupForm, keywordText, useKeywords } from './group-form.tsx';
import { GroupMembers } from './group-members.tsx';

/** The group list's params in the URL (a group's page keeps them, for the way back). */
export function groupListParams(params: URLSearchParams): Record<string, string | undefined> {
  return { page: params.get('page') ?? undefined, Search: params.get('Search') ?? undefined };
}

/** The page of group `id`. */
export function GroupView(props: { api: Api; id: string }) {
  const { api, id } = props;
  const place = usePlace();
  const back = placeHref('groups', undefined, groupListParams(place.params));
  const record = useRecord(() => api.GET('/v1/groups/view', { params: { query: { id } } }), [api, id]);
  const { keywords } = useKeywords(api);
  const [editing, setEditing] = useState(false);
  const [status, setStatus] = useState<{ text: string; stamp: number } | undefined>();
  const say = (text: string) => setStatus({ text, stamp: Date.now() });
  const g = record.data;
  const name = g?.Name ?? `Group ${id}`;
  const members = (g?.PhoneNumberIds ?? []).length;
  const keyword = g === undefined || g.KeywordId === 0 ? undefined : keywords?.find((k) => k.Id === g.KeywordId);
  const writable = api.can('groups:write');

  return (
    <>
      <p>
        <a href={back}>All groups</a>
      </p>
      <h1 class="text">{name}</h1>
      {record.status === 404 ? <p>This group does not exist: it may have been deleted.</p> : <ErrorLine error={record.error} />}
      {status !== undefined && <StatusLine text={status.text} stamp={status.stamp} />}
      {g === undefined ? (
        record.error === undefined && <p role="status">Loading…</p>
      ) : (
        <>
          {editing ? (
            <GroupForm
              api={api}
              group={g}
              onCancel={() => {
                setEditing(false);
                focusHeadingSoon();
              }}
              onSaved={(saved) => {
                setEditing(false);
                forgetGroupName(g.Id ?? 0);
                say(saved === undefined ? 'Nothing changed.' : 'Saved.');
                record.reload();
              }}
            />
          ) : (
            <section class="card" aria-label="Group details">
              <dl class="details" data-testid="group-details">
                <dt>Note</dt>
                <dd class="text">{g.Note || '—'}</dd>
                <dt>Keyword</dt>
                <dd>
                  {g.KeywordId === 0
                    ? 'None'
                    : `${keyword === undefined ? `Keyword ${g.KeywordId}` : keywordText(keyword)}: whoever texts it joins the group`}
                </dd>
                <dt>Parent group</dt>
                <dd>{g.ParentId === 0 || g.ParentId === undefined ? 'None' : <GroupLink api={api} id={g.ParentId} />}</dd>
                <dt>Members</dt>
                <dd>{count(members, 'member')}</dd>
                <dt>Created</dt>
                <dd>
                  <When value={g.DateCreated} />
                </dd>
                <dt>Updated</dt>
                <dd>
                  <When value={g.DateUpdated} />
                </dd>
              </dl>
              <div class="actions">
                {writable && (
                  <button type="button" onClick={() => setEditing(true)}>
                    Edit group
                  </button>
                )}
                {api.can('contacts:read') && (
                  <a class="button-link" href={placeHref('contacts', undefined, { GroupId: String(g.Id) })}>
                    Search its members in Contacts
                  </a>
                )}
                {writable && (
                  <ConfirmButton
                    label="Delete group"
                    question={`Delete group “${name}”? ${
                      members === 0
                        ? 'It has no members.'
                        : members === 1
                          ? 'Its 1 member stays a contact: only the group goes.'
                          : `Its ${count(members, 'member')} stay contacts: only the group goes.`
                    } Groups inside it become top-level groups${g.KeywordId === 0 ? '' : ', and texting its keyword no longer adds anyone'}. This cannot be undone.`}
                    confirm="Delete group"
                    onConfirm={async () => {
                      try {
                        const { error, response } = await api.DELETE('/v1/groups/delete', { params: { query: { id } } });
                        if (error !== undefined || !response.ok) return say(errorText(error, response.status));
                        forgetGroupName(g.Id ?? 0);
                        leaveNotice('groups', `Deleted group ${name}. Its members are still contacts.`);
                        go(back);
                      } catch {
                        say('The server could not be reached.');
                      }
                    }}
                  />
                )}
              </div>
            </section>
          )}
          {api.can('contacts:read') && <GroupMembers api={api} groupId={g.Id ?? 0} groupName={name} onChange={record.reload} />}
        </>
      )}
    </>
  );
}
