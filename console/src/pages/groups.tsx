import { useState } from 'preact/hooks';
import type { Api } from '../api.ts';
import { go, placeHref, usePlace, useUrlFilters } from '../route.ts';
import { ErrorLine, Pager, usePagedList } from './list.tsx';
import { count, GroupLink, searchGroups, StatusLine, takeNotice, type Group } from './contact-shared.tsx';
import { GroupForm, keywordText, useKeywords } from './group-form.tsx';
import { groupListParams, GroupView } from './group-view.tsx';
import { useDraft } from './ui.tsx';

/**
 * Groups (docs/API.md §10.3): the list (`#/groups`: groups/index, paged, searched on the server by
 * name with `Search`, both kept in the URL) with each group's members count, note, keyword and
 * parent; a form to create one (groups/create: name, note, keyword, parent); and one group
 * (`#/groups/<id>`, group-view.tsx: edit, delete, members). Changes need `groups:write`.
 */
export function Groups(props: { api: Api }) {
  const place = usePlace();
  if (place.id !== undefined) return <GroupView api={props.api} id={place.id} />;
  return <GroupList api={props.api} />;
}

/** The list of groups with its search and the form to create one. */
function GroupList(props: { api: Api }) {
  const { api } = props;
  const place = usePlace();
  const filters = useUrlFilters(['Search'] as const);
  const { Search } = filters.applied;
  const [draft, setDraft] = useDraft(Search, Search);
  const [notice] = useState(() => takeNotice('groups'));
  const { keywords } = useKeywords(api);
  const list = usePagedList<Group>((page) => searchGroups(api, Search, { page: String(page) }), [api, Search]);
  const listParams = groupListParams(place.params);

  return (
    <>
      <h1>Groups</h1>
      <StatusLine text={notice} focus={false} />
      <form
        class="filters"
        aria-label="Search groups"
        onSubmit={(e) => {
          e.preventDefault();
          filters.apply({ Search: draft });
        }}
      >
        <div>
          <label for="groups-search">Search by name</label>
          <input id="groups-search" type="search" value={draft} autoComplete="off" onInput={(e) => setDraft(e.currentTarget.value)} />
        </div>
        <div class="actions wide">
          <button type="submit">Search</button>
          {Search !== '' && (
            <button type="button" class="secondary" onClick={() => filters.apply({ Search: '' })}>
              Show all groups
            </button>
          )}
        </div>
      </form>
      <ErrorLine error={list.error} />
      {list.rows === undefined ? (
        <p role="status">Loading…</p>
      ) : list.rows.length === 0 ? (
        <p>{Search === '' ? 'No groups yet.' : 'No group matches.'}</p>
      ) : (
        <ul class="cards-list">
          {list.rows.map((g) => {
            const keyword = g.KeywordId === 0 ? undefined : keywords?.find((k) => k.Id === g.KeywordId);
            return (
              <li key={g.Id} class="card" data-testid="group">
                <p>
                  <a href={placeHref('groups', g.Id, listParams)}>
                    <strong class="text">{g.Name}</strong>
                  </a>{' '}
                  · <span data-testid="member-count">{count((g.PhoneNumberIds ?? []).length, 'member')}</span>
                </p>
                {(g.Note ?? '') !== '' && <p class="text">{g.Note}</p>}
                {g.KeywordId !== 0 && <p>Keyword: {keyword === undefined ? `keyword ${g.KeywordId}` : keywordText(keyword)}</p>}
                {g.ParentId !== 0 && g.ParentId !== undefined && (
                  <p>
                    Inside <GroupLink api={api} id={g.ParentId} />
                  </p>
                )}
              </li>
            );
          })}
        </ul>
      )}
      <Pager list={list} noun="groups" />
      {api.can('groups:write') && (
        <GroupForm api={api} onSaved={(created) => created !== undefined && go(placeHref('groups', created.Id, listParams))} />
      )}
    </>
  );
}
