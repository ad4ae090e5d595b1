// Toggles detail rows in the results viewer.
export function hide(row) {
  row.innerHTML = '<div class="detail" style="display:none">' + row.innerHTML + '</div>';
}
