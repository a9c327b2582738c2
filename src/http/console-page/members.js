/* The console's members page: the tenant's name and every member with their role
 * (`GET /console/tenant`). An owner adds a member, changes a role or removes one, each a
 * `PUT /console/tenant` of the whole list (the caller stays owner whatever it says); a
 * refusal shows beside the control or field that met it. Plain browser JavaScript, no
 * build step. */
/* global document, ConsoleApi */
'use strict';

// A top-level binding of a classic script: resources.js reads it.
// eslint-disable-next-line @typescript-eslint/no-unused-vars
const ConsoleMembers = (() => {
  const $ = (id) => document.getElementById(id);

  function open(who, ui) {
    let closed = false;
    let held = null;

    /** Writes `members` as the tenant's list. */
    const put = (members) => ConsoleApi.putTenant(who.token, held.name, members);

    function controlsOf(member, reload) {
      if (member.user === who.user) return ui.el('span', { class: 'note' }, 'you');
      const others = held.members.filter((m) => m.user !== member.user);
      const role = member.role === 'owner' ? 'member' : 'owner';
      return ui.el(
        'div',
        { class: 'controls' },
        ui.control(`Make ${role}`, {
          run: () => put([...others, { user: member.user, role }]),
          done: reload,
        }),
        ui.control('Remove', {
          confirm: `Remove ${member.user} from the tenant?`,
          run: () => put(others),
          done: reload,
        }),
      );
    }

    async function load() {
      const data = await ui.read('the members', () => ConsoleApi.tenant(who.token));
      if (data === null || closed) return;
      held = data;
      $('tenant-name').textContent = data.name === '' ? data.tenant : data.name;
      const head = ui.owner ? ['User', 'Role', ''] : ['User', 'Role'];
      const rows = data.members.map((member) => {
        const cells = [member.user, member.role];
        if (ui.owner) cells.push(controlsOf(member, load));
        return cells;
      });
      $('member-list').replaceChildren(
        ui.table('Members', head, rows, (i) => ({ user: data.members[i].user })),
      );
    }

    async function add(event) {
      event.preventDefault();
      const error = document.querySelector('[data-error-for="member-user"]');
      error.textContent = '';
      const user = $('member-user').value.trim();
      if (user === '') {
        error.textContent = 'Name the user first.';
        return;
      }
      if (held === null) return;
      const members = held.members.filter((m) => m.user !== user);
      members.push({ user, role: $('member-role').value });
      const answer = await put(members);
      if (answer.status === 200 || answer.status === 201) {
        $('member-user').value = '';
        await load();
      } else {
        error.textContent = ui.problemOf(answer);
        $('member-user').focus();
      }
    }

    $('tenant-name').textContent = '';
    $('member-list').replaceChildren();
    $('add-member').hidden = !ui.owner;
    $('add-member').onsubmit = (event) => void add(event);
    void load();
    return {
      close() {
        closed = true;
      },
    };
  }

  return { open };
})();
