mod discovery;
mod fixture;
mod view;
